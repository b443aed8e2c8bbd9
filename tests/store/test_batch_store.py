"""Provider batches in the store (``llm_batches``, ``llm_batch_requests``), on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from theorembench.store import Store
from theorembench.store.batches import (
    batch_of_request,
    batch_requests,
    batches,
    get_batch,
    has_unfinished_batches,
    record_batch,
    update_batch,
)

WHERE = {"provider": "openai", "endpoint": "openai:default", "model": "openai/gpt-5"}


def test_a_batch_is_found_by_its_requests_while_it_is_not_failed(db_url):
    with Store(db_url) as store:
        assert not has_unfinished_batches(store)
        record_batch(store, "b-1", requests=[("tb-0", "key-a"), ("tb-1", "key-b")], now=100.0, **WHERE)
        assert has_unfinished_batches(store)
        assert get_batch(store, "b-1")["status"] == "submitting"
        found = batch_of_request(store, "key-b", **WHERE)
        assert (found["id"], found["custom_id"], found["n_requests"]) == ("b-1", "tb-1", 2)
        assert batch_of_request(store, "key-b", **{**WHERE, "model": "openai/gpt-5-mini"}) is None
        assert batch_of_request(store, "key-c", **WHERE) is None

        update_batch(store, "b-1", status="pending", remote_id="batch_abc", input_file="file-1")
        row = get_batch(store, "b-1")
        assert (row["status"], row["remote_id"], row["input_file"]) == ("pending", "batch_abc", "file-1")

        record_batch(store, "b-2", requests=[("tb-0", "key-b")], now=200.0, **WHERE)  # the request asked again
        assert batch_of_request(store, "key-b", **WHERE)["id"] == "b-2"  # the newest
        update_batch(store, "b-2", status="failed", detail={"error": "refused"})
        assert batch_of_request(store, "key-b", **WHERE)["id"] == "b-1"

        update_batch(store, "b-1", status="ended")
        assert not has_unfinished_batches(store)
        assert batch_of_request(store, "key-a", **WHERE) is None  # an ended batch counts only when asked for
        assert batch_of_request(store, "key-a", statuses=("pending", "ended"), **WHERE)["id"] == "b-1"
        assert [b["id"] for b in batches(store)] == ["b-2", "b-1"]
        assert [b["id"] for b in batches(store, status="failed")] == ["b-2"]
        assert [(r["custom_id"], r["cache_key"]) for r in batch_requests(store, "b-1")] == [("tb-0", "key-a"),
                                                                                            ("tb-1", "key-b")]
        with pytest.raises(ValueError, match="unknown batch status"):
            update_batch(store, "b-1", status="done")
