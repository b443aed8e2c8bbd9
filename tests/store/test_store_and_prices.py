"""The store's migrations and the price table."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from theorembench.llm.pricing import Price, PriceError, PriceTable
from theorembench.store import Store, StoreError
from theorembench.store.migrations import head
from theorembench.store.schema import TABLES


def test_migrations_apply_once(db_url):
    store = Store(db_url)
    assert store.schema_version == head()
    assert store.table_counts() == dict.fromkeys(TABLES, 0)
    assert set(TABLES) == {"runs", "datasets", "items", "model_calls", "results", "papers", "theorems", "steps",
                           "improof_problems", "improof_problem_versions", "improof_status_events", "improof_answers",
                           "improof_verdicts", "improof_verdict_overrides", "improof_grades", "improof_grade_corrections",
                           "web_users", "web_user_roles", "web_sessions", "web_tokens", "web_outbox",
                           "web_rate_limits", "web_reviews", "web_jobs", "web_grading", "web_flags",
                           "llm_batches", "llm_batch_requests", "web_review_invitations",
                           "web_review_messages"}
    if store.backend == "sqlite":
        assert store.fetch(sa.text("PRAGMA journal_mode"))[0][0] == "wal"
    run = store.create_run("k", "sig")
    store.close()
    again = Store(db_url)
    assert again.migrate() == 0
    assert again.get_run(run)["kind"] == "k"
    again.close()


def test_store_newer_than_code_is_refused(db_url):
    with Store(db_url) as store:
        store._execute(sa.text("UPDATE alembic_version SET version_num = :rev"), {"rev": "9999"})
    with pytest.raises(StoreError, match="newer than this") as info:
        Store(db_url)
    assert "'9999'" in str(info.value) and "\n" not in str(info.value)


def test_invalid_reply_stays_in_ledger_but_is_never_served(db_url):
    call = {"cache_key": "k1", "model": "m", "provider": "p", "request": "{}", "response_text": "no json",
            "status": "ok", "prompt_tokens": 7, "completion_tokens": 3, "cost_usd": 0.5}  # fmt: skip
    with Store(db_url) as store:
        call_id = store.record_call(**call)
        assert store.cached_call("k1")["id"] == call_id
        store.mark_call_invalid(call_id, "the reply contains no JSON value")
        assert store.cached_call("k1") is None
        row = store.get_call(call_id)
        assert (row["status"], row["error"], row["prompt_tokens"], row["cost_usd"]) == (
            "invalid", "the reply contains no JSON value", 7, 0.5)
        usage = store.usage()
        assert (usage["calls"], usage["ok"], usage["invalid"], usage["failed"], usage["cost_usd"]) == (1, 0, 1, 0, 0.5)
        # a failed call is never marked invalid; a later answer under the same key is served
        failed_id = store.record_call(**{**call, "status": "error", "response_text": None})
        store.mark_call_invalid(failed_id, "x")
        assert store.get_call(failed_id)["status"] == "error"
        good_id = store.record_call(**{**call, "response_text": '{"a": 1}'})
        assert store.cached_call("k1")["id"] == good_id


def test_db_env_var_is_honoured(tmp_path, monkeypatch):
    from theorembench.store import open_store

    monkeypatch.setenv("THEOREMBENCH_DB", str(tmp_path / "env.db"))
    with open_store() as store:
        assert store.path == tmp_path / "env.db"
    assert (tmp_path / "env.db").exists()


def test_prices_exact_beats_wildcard_and_user_file_wins(tmp_path, monkeypatch):
    table = PriceTable.load()
    assert table.lookup("local/smollm2") == Price(0.0, 0.0)
    assert table.lookup("anthropic/claude-sonnet-4-5-20250929").output == 15.0
    assert table.lookup("nobody/knows") is None
    assert table.cost("nobody/knows", 10, 10) is None
    user = tmp_path / "p.toml"
    user.write_text('[models]\n"anthropic/claude-sonnet-4*" = { input = 1.0, output = 2.0 }\n'
                    '"anthropic/claude-sonnet-4-5" = { input = 7.0, output = 9.0, cached_input = 0.5 }\n')
    monkeypatch.setenv("THEOREMBENCH_PRICES", str(user))
    table = PriceTable.load()
    assert table.lookup("anthropic/claude-sonnet-4-0").output == 2.0
    assert table.lookup("anthropic/claude-sonnet-4-5").input == 7.0
    # 1000 prompt tokens of which 400 cached, 100 completion tokens
    assert table.cost("anthropic/claude-sonnet-4-5", 1000, 100, 400) == pytest.approx((600 * 7 + 400 * 0.5 + 100 * 9) / 1e6)


def test_bad_price_file_is_a_clear_error(tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text('[models]\n"x/y" = { input = 1.0 }\n')
    monkeypatch.setenv("THEOREMBENCH_PRICES", str(bad))
    with pytest.raises(PriceError, match="'x/y' needs 'input' and 'output'"):
        PriceTable.load()
