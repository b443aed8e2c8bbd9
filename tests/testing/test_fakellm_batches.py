"""The fake server's batch APIs, driven by the official OpenAI and Anthropic SDKs over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json

import anthropic
import openai
from helpers.fakellm import srv  # noqa: F401 - a fixture

CHAT_URL = "/v1/chat/completions"


def oai(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, timeout=10)


def ant(server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="test-key", max_retries=0, timeout=10)


def jsonl(lines: list[dict]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def chat_line(custom_id: str, content: str) -> dict:
    return {"custom_id": custom_id, "method": "POST", "url": CHAT_URL,
            "body": {"model": "m", "messages": [{"role": "user", "content": content}]}}  # fmt: skip


def done(server, batch_id: str, status: str = "completed") -> None:
    server.wait_for(lambda st: st["batches"]["status"].get(batch_id) == status, timeout=30)


def rows(client: openai.OpenAI, file_id: str | None) -> dict[str, dict]:
    assert file_id is not None
    return {row["custom_id"]: row for row in map(json.loads, client.files.content(file_id).text.splitlines())}


def test_openai_batch_answers_each_line_through_the_script(srv):
    srv.set_script({"default": {"reply": "said {last_user}"},
                    "rules": [{"match": "refuse me", "reply": "never", "faults": [{"kind": "400", "times": 1}]}]})
    with oai(srv) as client:
        uploaded = client.files.create(file=("in.jsonl", jsonl([chat_line("a", "one"), chat_line("b", "two"),
                                                                chat_line("c", "refuse me")])), purpose="batch")
        batch = client.batches.create(input_file_id=uploaded.id, endpoint=CHAT_URL, completion_window="24h",
                                      metadata={"ours": "x1"})  # fmt: skip
        done(srv, batch.id)
        finished = client.batches.retrieve(batch.id)
        assert finished.status == "completed" and finished.metadata == {"ours": "x1"}
        assert (finished.request_counts.total, finished.request_counts.completed,
                finished.request_counts.failed) == (3, 2, 1)  # fmt: skip
        output = rows(client, finished.output_file_id)
        errors = rows(client, finished.error_file_id)
        listed = [b.id for b in client.batches.list(limit=10).data]
    assert {cid: row["response"]["body"]["choices"][0]["message"]["content"] for cid, row in output.items()} == \
        {"a": "said one", "b": "said two"}  # fmt: skip
    assert output["a"]["response"]["status_code"] == 200
    assert list(errors) == ["c"] and errors["c"]["response"]["status_code"] == 400
    assert listed == [batch.id]
    stats = srv.stats()
    assert {k: stats["batches"][k] for k in ("files", "created", "requests", "answered", "failed")} == \
        {"files": 1, "created": 1, "requests": 3, "answered": 2, "failed": 1}  # fmt: skip
    assert stats["total_requests"] == 3 and stats["completed"] == 2  # each line once, as a chat request


def test_batch_hold_keeps_a_batch_in_progress_until_released(srv):
    srv.set_script({"default": {"reply": "late"}, "batch_hold": True})
    with oai(srv) as client:
        uploaded = client.files.create(file=("in.jsonl", jsonl([chat_line("a", "q")])), purpose="batch")
        batch = client.batches.create(input_file_id=uploaded.id, endpoint=CHAT_URL, completion_window="24h")
        done(srv, batch.id, "in_progress")
        assert client.batches.retrieve(batch.id).status == "in_progress"
        assert srv.stats()["total_requests"] == 0  # held: no request of it ran
        srv.release_batches()
        done(srv, batch.id)
        output = rows(client, client.batches.retrieve(batch.id).output_file_id)
    assert output["a"]["response"]["body"]["choices"][0]["message"]["content"] == "late"
    assert srv.stats()["batches"]["answered"] == 1


def test_a_cancelled_batch_runs_nothing_and_says_so_per_request(srv):
    srv.set_script({"default": {"reply": "x"}, "batch_hold": True})
    with oai(srv) as client:
        uploaded = client.files.create(file=("in.jsonl", jsonl([chat_line("a", "q"), chat_line("b", "r")])),
                                       purpose="batch")  # fmt: skip
        batch = client.batches.create(input_file_id=uploaded.id, endpoint=CHAT_URL, completion_window="24h")
        client.batches.cancel(batch.id)
        done(srv, batch.id, "cancelled")
        errors = rows(client, client.batches.retrieve(batch.id).error_file_id)
    assert {cid: row["error"]["code"] for cid, row in errors.items()} == {"a": "batch_cancelled",
                                                                         "b": "batch_cancelled"}
    assert srv.stats()["total_requests"] == 0


def test_a_bad_input_file_fails_its_batch(srv):
    with oai(srv) as client:
        uploaded = client.files.create(file=("in.jsonl", jsonl([chat_line("a", "q"), chat_line("a", "again")])),
                                       purpose="batch")  # fmt: skip
        batch = client.batches.create(input_file_id=uploaded.id, endpoint=CHAT_URL, completion_window="24h")
        assert batch.status == "failed"
        assert "custom_id" in batch.errors.data[0].message
        try:
            client.batches.create(input_file_id="file-nope", endpoint=CHAT_URL, completion_window="24h")
        except openai.BadRequestError as exc:
            assert "file-nope" in str(exc)
        else:
            raise AssertionError("an unknown input file was accepted")
    assert srv.stats()["total_requests"] == 0


def test_anthropic_message_batch(srv):
    srv.set_script({"default": {"reply": "claude says {last_user}", "reasoning": "thought"}})
    with ant(srv) as client:
        batch = client.messages.batches.create(requests=[
            {"custom_id": "r1", "params": {"model": "c", "max_tokens": 100,
                                           "messages": [{"role": "user", "content": "hello"}]}},
            {"custom_id": "r2", "params": {"model": "c", "max_tokens": 100,
                                           "messages": [{"role": "user", "content": "bye"}]}},
        ])  # fmt: skip
        done(srv, batch.id)
        assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
        results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert {cid: r.type for cid, r in results.items()} == {"r1": "succeeded", "r2": "succeeded"}
    texts = {cid: [b.text for b in r.message.content if b.type == "text"] for cid, r in results.items()}
    assert texts == {"r1": ["claude says hello"], "r2": ["claude says bye"]}
    assert srv.stats()["endpoints"] == {"messages": 2}
