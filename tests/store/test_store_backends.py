"""The store on SQLite and PostgreSQL: its API, locations and URLs, concurrent creation, legacy stores."""

from __future__ import annotations

import multiprocessing
import socket
import sqlite3

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.store import Store, StoreError, open_store
from theorembench.store import db as store_db
from theorembench.store.migrations import ALEMBIC_USER_VERSION, head
from theorembench.store.papers import PaperRepo
from theorembench.store.schema import metadata
from theorembench.store.steps import StepResult, Steps


def call(store: Store, key: str, status: str = "ok", **fields) -> int:
    return store.record_call(cache_key=key, model="m/x", provider="p", request={"q": key}, status=status, **fields)


def test_store_api_on_both_backends(db_url):
    with Store(db_url) as store:
        first = store.create_run("eval.mcq", "sig", name="n", model="m/x", config={"a": 1})
        second = store.create_run("eval.mcq", "sig")
        store.create_run("other", "sig")
        assert store.latest_run("eval.mcq", "sig")["id"] == second
        assert [r["id"] for r in store.runs("eval.mcq")] == [second, first]
        store.set_run_status(first, "finished", {"all": {"accuracy": 0.5}})
        run = store.get_run(first)
        assert run["status"] == "finished" and run["summary"] == '{"all": {"accuracy": 0.5}}'
        assert run["config"] == '{"a": 1}' and store.get_run("nope") is None
        # rows: by name, by position, keys() and dict()
        assert run[0] == first and run.keys()[0] == "id" and dict(run)["kind"] == "eval.mcq"

        store.put_dataset("ds", [("i0", {"q": 0}), ("i1", {"q": 1})], path="f.json", name="f")
        store.put_dataset("ds", [("i0", {"q": 0}), ("i1", {"q": 1})], path="f.json", name="f")  # idempotent
        assert store.table_counts(["datasets", "items"]) == {"datasets": 1, "items": 2}

        ok = call(store, "k1", prompt_tokens=10, completion_tokens=5, cost_usd=0.25, latency_s=1.5, run_id=first)
        bad = call(store, "k2", status="error", error="boom", run_id=first)
        again = call(store, "k1", prompt_tokens=1, cost_usd=None)
        assert ok < bad < again
        assert store.cached_call("k1")["id"] == again and store.cached_call("k2") is None
        assert store.get_call(bad)["error"] == "boom" and store.get_call(bad)["attempts"] == 1
        usage = store.usage(first)
        assert (usage["calls"], usage["ok"], usage["failed"], usage["prompt_tokens"]) == (2, 1, 1, 10)
        assert usage["cost_usd"] == pytest.approx(0.25) and usage["latency_s"] == pytest.approx(1.5)
        assert store.usage()["calls"] == 3
        (by_model,) = store.usage_by_model()
        assert (by_model["model"], by_model["calls"], by_model["ok"], by_model["prompt_tokens"]) == ("m/x", 3, 2, 11)

        store.put_result(first, 0, 0, item_id="i0", status="ok", record={"r": 1}, call_id=ok, is_correct=True)
        store.put_result(first, 0, 0, item_id="i0", status="error", record={"r": 2}, call_id=bad, error="boom")
        store.put_result(first, 1, 0, item_id="i1", status="ok", record={}, answer="B", is_correct=False)
        rows = store.results(first)
        assert [(r["idx"], r["status"], r["is_correct"], r["call_id"]) for r in rows] == [
            (0, "error", None, bad), (1, "ok", 0, None)]  # fmt: skip
        store.delete_results(first, 0)
        assert [r["idx"] for r in store.results(first)] == [1]

        with pytest.raises(RuntimeError), store.transaction():
            store.create_run("rolled", "back")
            raise RuntimeError("undo")
        assert store.runs("rolled") == []
        assert store.fetch(sa.text("SELECT COUNT(*) AS n FROM runs WHERE kind = :kind"), {"kind": "other"})[0]["n"] == 1
        with pytest.raises(TypeError):
            store.fetch("SELECT 1")  # type: ignore[arg-type]


def test_usage_of_calls_chunks_its_id_list(db_url, monkeypatch):
    monkeypatch.setattr(store_db, "IN_CHUNK", 3)
    with Store(db_url) as store:
        ids = [call(store, f"k{i}", prompt_tokens=i, completion_tokens=1, cost_usd=None if i % 2 else 0.5)
               for i in range(10)]  # fmt: skip
        usage = store.usage_of_calls([*ids[:7], ids[0], 10_000])
        assert usage == {"calls": 7, "prompt_tokens": sum(range(7)), "completion_tokens": 7,
                         "cost_usd": pytest.approx(2.0)}  # fmt: skip
        assert store.usage_of_calls([ids[1], ids[3]])["cost_usd"] is None
        assert store.usage_of_calls([]) == {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None}


def test_papers_and_steps_on_both_backends(db_url):
    with Store(db_url) as store:
        repo = PaperRepo(store)
        repo.upsert("arxiv:2511.1v1", source="arxiv", arxiv_id="2511.1", version=1, authors=["A"], month="2025-11")
        repo.upsert("arxiv:2511.1v2", source="arxiv", arxiv_id="2511.1", version=2, month="2025-11")
        repo.upsert("local:x", source="local", version=None)
        repo.add_problem("arxiv:2511.1v1", "no theorem")
        assert repo.find("2511.1")["id"] == "arxiv:2511.1v2"
        assert repo.get("arxiv:2511.1v1")["problems"] == ["no theorem"] and repo.get("local:x")["meta"] == {}
        assert [p["id"] for p in repo.list(month="2025-11")] == ["arxiv:2511.1v1", "arxiv:2511.1v2"]
        repo.put_theorem("local:x", "s1", path="a.tex", record={"theorem": {"label": "t"}}, reason="ok", call_ids=[])
        repo.put_theorem("local:x", "s1", path="b.tex", record=None, reason="again", call_ids=[3])
        assert repo.theorem("local:x")["path"] == "b.tex" and repo.theorem("local:x", "s1")["call_ids"] == [3]

        steps = Steps(store, "pipe")
        steps.put("k", "a", StepResult("failed", reason="later"))
        assert steps.get("k", "a").status == "failed" and steps.done("k", "a") is None
        steps.put("k", "a", StepResult("ok", {"x": [1]}, call_ids=[7]))
        steps.put("k", "b", StepResult("rejected", reason="judge"))
        assert steps.done("k", "a").output == {"x": [1]} and steps.done("k", "b").reason == "judge"
        assert [(k, s, r.status) for k, s, r in steps.all()] == [("k", "a", "ok"), ("k", "b", "rejected")]
        assert [s for _, s, _ in steps.all("b")] == ["b"] and Steps(store, "other").all() == []


def test_schema_module_matches_the_migrations(db_url):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from theorembench.store.migrations import scripts

    with Store(db_url) as store:
        diff = compare_metadata(MigrationContext.configure(store._conn), metadata)
    assert diff == []
    assert head() == scripts().get_current_head()  # the file names of the revisions name the head


# -- concurrent creation ---------------------------------------------------


def _open_at_barrier(url: str, barrier, results) -> None:  # noqa: ANN001 - multiprocessing objects
    try:
        barrier.wait(timeout=120)
        with Store(url) as store:
            store.record_call(cache_key="c", model="m", provider="p", request="{}", status="ok")
        results.put("ok")
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put(f"{type(exc).__name__}: {exc}")


def test_processes_creating_one_store_at_once_all_succeed(db_url):
    # forked children start at once (no re-import); no store is open in this process to share by accident
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    n = 4
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_open_at_barrier, args=(db_url, barrier, results)) for _ in range(n)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert outcomes == ["ok"] * n
    with Store(db_url) as store:
        assert store.usage()["calls"] == n
        assert store.fetch(sa.text("SELECT version_num FROM alembic_version")) == [(head(),)]


# -- locations and URLs ------------------------------------------------------


@pytest.mark.parametrize("bad", [
    "mysql://user:secret@db.example/tb", "postgres:/x", "postgres://user@host/db", "postgresql+psycopg2://h/db",
    "sqlite:/x.db", "sqlite://host/x.db", "redis://localhost", "postgresql:x",
])  # fmt: skip
def test_other_urls_are_refused_and_never_become_files(bad, tmp_path):
    before = set(tmp_path.rglob("*"))
    with pytest.raises(StoreError) as info:
        Store(bad)
    message = str(info.value)
    assert "\n" not in message and "secret" not in message
    assert set(tmp_path.rglob("*")) == before
    res = CliRunner().invoke(app, ["store", "info", "--db", bad])
    assert res.exit_code == 2 and "error:" in res.output
    assert set(tmp_path.rglob("*")) == before


def test_unreachable_postgresql_is_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once the socket closes
    with pytest.raises(StoreError) as info:
        Store(f"postgresql://tb:pw@127.0.0.1:{port}/tb")
    message = str(info.value)
    assert "\n" not in message and "cannot open PostgreSQL store" in message and ":pw@" not in message


def test_sqlite_urls_and_paths(tmp_path, monkeypatch):
    with Store("sqlite:///rel/a.db") as store:
        assert store.backend == "sqlite" and store.path.resolve() == (tmp_path / "rel" / "a.db").resolve()
    with Store(f"sqlite:///{tmp_path}/abs.db") as store:
        assert store.path == tmp_path / "abs.db"
    with Store(":memory:") as store:
        assert store.create_run("k", "s") and store.path == ":memory:"
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    monkeypatch.setenv("THEOREMBENCH_DB", "~/t.db")
    with open_store() as store:
        assert store.path == tmp_path / "h" / "t.db"
    assert (tmp_path / "h" / "t.db").exists()


def test_postgresql_from_env_and_cli(pg_url, monkeypatch):
    monkeypatch.setenv("THEOREMBENCH_DB", pg_url)
    with open_store() as store:
        assert store.backend == "postgresql" and store.url == pg_url
        store.create_run("k", "s")
    res = CliRunner().invoke(app, ["store", "info"])
    assert res.exit_code == 0, res.output
    assert '"runs": 1' in res.output
    plus = pg_url.replace("postgresql://", "postgresql+psycopg://")
    res = CliRunner().invoke(app, ["store", "runs", "--db", plus, "--json"])
    assert res.exit_code == 0 and '"kind": "k"' in res.output


# -- stores made before Alembic ---------------------------------------------

# The DDL of the three migrations the store had before Alembic (its PRAGMA user_version 1..3).
LEGACY_DDL = [
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY, kind TEXT NOT NULL, signature TEXT NOT NULL, name TEXT, model TEXT, dataset_id TEXT,
        status TEXT NOT NULL DEFAULT 'running', config TEXT NOT NULL DEFAULT '{}', summary TEXT,
        created_at REAL NOT NULL, updated_at REAL NOT NULL
    );
    CREATE INDEX runs_signature ON runs(kind, signature, created_at);
    CREATE TABLE datasets (
        id TEXT PRIMARY KEY, path TEXT, name TEXT, n_items INTEGER NOT NULL, created_at REAL NOT NULL
    );
    CREATE TABLE items (
        dataset_id TEXT NOT NULL REFERENCES datasets(id), idx INTEGER NOT NULL, item_id TEXT NOT NULL,
        payload TEXT NOT NULL, PRIMARY KEY (dataset_id, idx)
    );
    CREATE INDEX items_item_id ON items(item_id);
    CREATE TABLE model_calls (
        id INTEGER PRIMARY KEY AUTOINCREMENT, cache_key TEXT NOT NULL, run_id TEXT, purpose TEXT,
        model TEXT NOT NULL, provider TEXT NOT NULL, request TEXT NOT NULL, response_text TEXT, response TEXT,
        status TEXT NOT NULL, error TEXT, attempts INTEGER NOT NULL DEFAULT 1,
        prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens INTEGER NOT NULL DEFAULT 0, total_tokens INTEGER NOT NULL DEFAULT 0,
        latency_s REAL NOT NULL DEFAULT 0, cost_usd REAL, created_at REAL NOT NULL
    );
    CREATE INDEX model_calls_cache ON model_calls(cache_key, status);
    CREATE INDEX model_calls_run ON model_calls(run_id);
    CREATE TABLE results (
        run_id TEXT NOT NULL REFERENCES runs(id), idx INTEGER NOT NULL, sample INTEGER NOT NULL,
        item_id TEXT NOT NULL, call_id INTEGER REFERENCES model_calls(id), status TEXT NOT NULL, answer TEXT,
        correct_label TEXT, is_correct INTEGER, error TEXT, record TEXT NOT NULL, created_at REAL NOT NULL,
        PRIMARY KEY (run_id, idx, sample)
    );
    """,
    """
    CREATE TABLE papers (
        id TEXT PRIMARY KEY, source TEXT NOT NULL, arxiv_id TEXT, version INTEGER, month TEXT, title TEXT,
        authors TEXT NOT NULL DEFAULT '[]', abstract TEXT, primary_category TEXT,
        categories TEXT NOT NULL DEFAULT '[]', published TEXT, updated TEXT, license TEXT,
        meta TEXT NOT NULL DEFAULT '{}', eprint_path TEXT, eprint_kind TEXT, eprint_sha256 TEXT, folder TEXT,
        status TEXT NOT NULL, reason TEXT, problems TEXT NOT NULL DEFAULT '[]',
        created_at REAL NOT NULL, updated_at REAL NOT NULL
    );
    CREATE INDEX papers_month ON papers(month, primary_category);
    CREATE TABLE theorems (
        paper_id TEXT NOT NULL REFERENCES papers(id), settings_key TEXT NOT NULL, path TEXT NOT NULL,
        env_name TEXT, label TEXT, reason TEXT, record TEXT, call_ids TEXT NOT NULL DEFAULT '[]',
        created_at REAL NOT NULL, PRIMARY KEY (paper_id, settings_key)
    );
    """,
    """
    CREATE TABLE steps (
        pipeline TEXT NOT NULL, key TEXT NOT NULL, stage TEXT NOT NULL, status TEXT NOT NULL, output TEXT,
        reason TEXT, call_ids TEXT NOT NULL DEFAULT '[]', updated_at REAL NOT NULL,
        PRIMARY KEY (pipeline, key, stage)
    );
    """,
]


def legacy_store(path, version: int = 3) -> None:
    """A store as the code before Alembic left it at ``PRAGMA user_version`` = ``version``, with some data."""
    conn = sqlite3.connect(path)
    for ddl in LEGACY_DDL[:version]:
        conn.executescript(ddl)
    conn.execute("INSERT INTO runs (id, kind, signature, created_at, updated_at) VALUES ('r1', 'eval.mcq', 's', 1, 1)")
    conn.execute("INSERT INTO model_calls (cache_key, model, provider, request, status, prompt_tokens, cost_usd,"
                 " created_at) VALUES ('k', 'm', 'p', '{}', 'ok', 7, 0.5, 1)")  # fmt: skip
    conn.execute("INSERT INTO results (run_id, idx, sample, item_id, call_id, status, record, created_at)"
                 " VALUES ('r1', 0, 0, 'i0', 1, 'ok', '{}', 1)")  # fmt: skip
    if version >= 3:
        conn.execute("INSERT INTO steps (pipeline, key, stage, status, output, updated_at)"
                     " VALUES ('p', 'k', 's', 'ok', '[1]', 1)")  # fmt: skip
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("version", [3, 1])
def test_store_made_before_alembic_is_adopted_without_losing_data(tmp_path, version):
    path = tmp_path / "old.db"
    legacy_store(path, version)
    with Store(path) as store:
        assert store.schema_version == head()  # adopted at the first revision, then upgraded
        assert store.fetch(sa.text("PRAGMA user_version"))[0][0] == ALEMBIC_USER_VERSION
        assert store.get_run("r1")["kind"] == "eval.mcq"
        assert [r["call_id"] for r in store.results("r1")] == [1]
        assert store.usage()["prompt_tokens"] == 7
        assert call(store, "new") == 2  # the autoincrement goes on
        if version >= 3:
            assert Steps(store, "p").done("k", "s").output == [1]
        Steps(store, "p").put("k2", "s", StepResult("ok", 2))  # tables of later legacy versions exist
        PaperRepo(store).upsert("local:x", source="local")
    with Store(path) as store:
        assert store.migrate() == 0 and store.usage()["calls"] == 2


def test_unknown_legacy_version_is_refused(tmp_path):
    path = tmp_path / "odd.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 9")
    conn.close()
    with pytest.raises(StoreError, match="newer than this"):
        Store(path)
