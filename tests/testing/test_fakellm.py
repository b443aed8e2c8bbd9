"""Tests of the fake LLM server itself (theorembench.testing.fakellm).

The official SDKs talk to the server over real HTTP on 127.0.0.1; raw httpx /
sockets are used where an SDK would hide the shape of an injected fault.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading

import anthropic
import httpx
import openai
import pytest
from helpers.fakellm import srv  # noqa: F401 - a fixture

from theorembench.testing.fakellm import FakeLLMServer, last_user_text, prompt_key, prompt_text, spawn

USER = [{"role": "user", "content": "What is 2+2?"}]


def oai(server, **kw) -> openai.OpenAI:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 10)
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", **kw)


def ant(server, **kw) -> anthropic.Anthropic:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 10)
    return anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="test-key", **kw)


def raw() -> httpx.Client:
    return httpx.Client(trust_env=False, timeout=10)


def chat(server, content: str, **kw):
    with oai(server) as client:
        return client.chat.completions.create(model="m", messages=[{"role": "user", "content": content}], **kw)


def raw_exchange(port: int, body: dict, path: str = "/v1/chat/completions") -> bytes:
    """Send one HTTP request on a fresh socket and return every byte until EOF."""
    payload = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + payload)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                return b"".join(chunks)
            chunks.append(data)


# ------------------------------------------------------------------ happy paths (SDKs)


def test_openai_chat_text_and_default_usage(srv):
    reasoning = "Two plus two, carefully: four."  # 30 chars -> 7 reasoning tokens
    srv.set_script({"rules": [{"match": r"2\+2", "reply": "\\boxed{4}", "reasoning": reasoning}]})
    messages = [{"role": "system", "content": "Be terse."}, *USER]
    r = oai(srv).chat.completions.create(model="m1", messages=messages)
    assert r.object == "chat.completion"
    assert r.model == "m1"
    choice = r.choices[0]
    assert choice.message.content == "\\boxed{4}"
    assert choice.message.reasoning_content == reasoning
    assert choice.finish_reason == "stop"
    rt = len(reasoning) // 4
    assert r.usage.completion_tokens_details.reasoning_tokens == rt
    assert r.usage.completion_tokens == len("\\boxed{4}") // 4 + 1 + rt
    assert r.usage.prompt_tokens == len("Be terse.\nWhat is 2+2?") // 4 + 1
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    st = srv.stats()
    assert st["completed"] == 1 and st["total_requests"] == 1
    assert st["rule_hits"] == {"0": 1}


def test_scripted_usage_n_choices_and_default_reply(srv):
    srv.set_script(
        {
            "default": {"reply": "plain"},
            "rules": [{"match": "usage", "reply": "x", "usage": {"prompt_tokens": 10, "completion_tokens": 5, "reasoning_tokens": 3}}],
        }
    )
    r = chat(srv, "scripted usage please")
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.completion_tokens_details.reasoning_tokens) == (10, 5, 3)
    r = chat(srv, "anything else", n=3)
    assert [c.index for c in r.choices] == [0, 1, 2]
    assert {c.message.content for c in r.choices} == {"plain"}
    assert srv.stats()["rule_hits"] == {"0": 1, "default": 1}


def test_reply_sequence_per_rule(srv):
    srv.set_script({"rules": [{"match": "seq", "reply": ["one", "two", "three"]}, {"match": "other", "reply": ["A", "B"]}]})
    got = [chat(srv, "seq").choices[0].message.content for _ in range(2)]
    got.append(chat(srv, "other").choices[0].message.content)
    got += [chat(srv, "seq").choices[0].message.content for _ in range(2)]
    assert got == ["one", "two", "A", "three", "three"]
    assert srv.stats()["rule_hits"] == {"0": 4, "1": 1}
    srv.reset()  # sequences restart
    assert chat(srv, "seq").choices[0].message.content == "one"


def test_last_user_placeholder_and_echo(srv):
    srv.set_script({"rules": [{"match": "Q:", "reply": "you said <{last_user}> \\boxed{B}"}], "echo": True})
    r = oai(srv).chat.completions.create(
        model="m",
        messages=[
            {"role": "user", "content": "Q: first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "Q: second"}]},
        ],
    )
    assert r.choices[0].message.content == "you said <Q: second> \\boxed{B}"
    assert chat(srv, "echo me").choices[0].message.content == "echo me"


def test_max_tokens_truncates_with_length_finish(srv):
    srv.set_script({"default": {"reply": "a" * 400}})
    r = chat(srv, "long", max_tokens=10)
    assert r.choices[0].finish_reason == "length"
    assert r.choices[0].message.content == "a" * 40
    assert r.usage.completion_tokens == 10
    r = chat(srv, "long", max_completion_tokens=1000)
    assert r.choices[0].finish_reason == "stop" and len(r.choices[0].message.content) == 400
    m = ant(srv).messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "long"}])
    assert m.stop_reason == "max_tokens" and m.content[-1].text == "a" * 20


def test_chat_streaming(srv):
    reply = "streamed " * 20
    srv.set_script({"default": {"reply": reply, "reasoning": "hmm"}})
    stream = oai(srv).chat.completions.create(model="m", messages=USER, stream=True)
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == reply
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == len(reply) // 4 + 1 + 0
    with raw() as c:
        resp = c.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER, "stream": True})
    assert resp.headers["content-type"].startswith("text/event-stream")
    events = [line for line in resp.text.split("\n\n") if line]
    assert events[-1] == "data: [DONE]"


def test_anthropic_thinking_text_and_stream(srv):
    srv.set_script({"rules": [{"match": "Be a prover", "reply": "\\boxed{C}", "reasoning": "let me think"}]})
    client = ant(srv)
    kwargs = dict(
        model="claude-fake",
        max_tokens=1000,
        system=[{"type": "text", "text": "Be a prover."}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "Prove it"}]}],
    )
    m = client.messages.create(**kwargs)
    assert [b.type for b in m.content] == ["thinking", "text"]
    assert m.content[0].thinking == "let me think" and m.content[0].signature == "sig"
    assert m.content[1].text == "\\boxed{C}"
    assert m.stop_reason == "end_turn" and m.stop_sequence is None
    assert m.usage.input_tokens == len("Be a prover.\nProve it") // 4 + 1
    assert m.usage.output_tokens == len("\\boxed{C}") // 4 + 1 + len("let me think") // 4
    with client.messages.stream(**kwargs) as stream:
        final = stream.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == "let me think" and final.content[1].text == "\\boxed{C}"
    assert final.stop_reason == "end_turn" and final.usage.output_tokens == m.usage.output_tokens
    assert srv.stats()["rule_hits"] == {"0": 2}


def test_responses_api(srv):
    srv.set_script({"rules": [{"match": "Solve", "reply": "\\boxed{D}", "reasoning": "because reasons"}]})
    r = oai(srv).responses.create(model="gpt-fake", instructions="Solve the problem.", input="What is x?")
    assert r.status == "completed"
    assert [item.type for item in r.output] == ["reasoning", "message"]
    assert r.output[0].summary[0].text == "because reasons"
    assert r.output_text == "\\boxed{D}"
    assert r.usage.output_tokens_details.reasoning_tokens == len("because reasons") // 4
    assert r.usage.input_tokens == len("Solve the problem.\nWhat is x?") // 4 + 1
    rec = srv.requests[-1]
    assert rec["endpoint"] == "responses" and rec["last_user"] == "What is x?" and rec["rule"] == 0


def test_models_endpoint(srv):
    srv.set_script({"rules": [{"match": "x", "model": "alpha"}, {"match": "y", "model": "beta"}]})
    assert [m.id for m in oai(srv).models.list()] == ["alpha", "beta"]
    srv.set_script({})
    assert [m.id for m in oai(srv).models.list()] == ["fake-model"]


def test_model_restricted_rule(srv):
    srv.set_script({"rules": [{"match": ".", "model": "special", "reply": "special"}], "default": {"reply": "generic"}})
    assert oai(srv).chat.completions.create(model="special", messages=USER).choices[0].message.content == "special"
    assert oai(srv).chat.completions.create(model="plain", messages=USER).choices[0].message.content == "generic"


# ------------------------------------------------------------------ request log


def test_request_log_prompt_keys_and_count():
    body = {
        "model": "claude-fake",
        "max_tokens": 50,
        "system": "SYS",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "world"}]}],
    }
    assert prompt_text(body) == "SYS\nhello\nworld"
    assert last_user_text(body) == "hello\nworld"
    with FakeLLMServer({"default": {"reply": "r"}}) as server:
        client = ant(server)
        client.messages.create(**body)
        client.messages.create(**body)
        client.messages.create(**dict(body, messages=[{"role": "user", "content": "other"}]))
        recs = server.requests
        assert [r["prompt_key"] for r in recs[:2]] == [prompt_key(body)] * 2
        assert recs[0]["body"]["system"] == "SYS" and recs[0]["outcome"] == "ok"
        assert server.count() == 3
        assert server.count(prompt_key=prompt_key(body)) == 2
        assert server.count(match="^other$") == 1
        assert server.stats()["prompt_keys"][prompt_key(body)] == 2
    with FakeLLMServer(keep_bodies=False) as server:
        chat(server, "hi")
        assert server.requests[0]["body"] is None and server.requests[0]["last_user"] == "hi"


def test_script_from_json_file_and_http_control(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"default": {"reply": "from file"}}))
    with FakeLLMServer(str(path)) as server, raw() as c:
        assert chat(server, "x").choices[0].message.content == "from file"
        bad = c.post(server.url + "/_script", json={"rules": [{"faults": [{"kind": "nope"}]}]})
        assert bad.status_code == 400 and "nope" in bad.json()["error"]
        ok = c.post(server.url + "/_script", json={"default": {"reply": "via http"}})
        assert ok.json() == {"ok": True}
        assert chat(server, "x").choices[0].message.content == "via http"
        assert c.get(server.url + "/_stats").json()["completed"] == 2
        c.post(server.url + "/_reset")
        assert c.get(server.url + "/_stats").json()["total_requests"] == 0
        assert server.requests == []
        r = c.post(server.base_url + "/chat/completions", content=b"{not json")
        assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"


def test_wait_for_times_out(srv):
    with pytest.raises(TimeoutError):
        srv.wait_for(lambda s: s["completed"] > 0, timeout=0.05)


# ------------------------------------------------------------------ faults


def test_429_rate_limit_then_retry_succeeds(srv):
    srv.set_script({"rules": [{"match": ".", "reply": "fine", "faults": [{"kind": "429", "times": 2, "retry_after": 0.01}]}]})
    with pytest.raises(openai.RateLimitError) as ei:
        chat(srv, "hi")
    assert ei.value.status_code == 429
    with raw() as c:
        r = c.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER})
    assert r.status_code == 429
    assert r.headers["Retry-After"] == "0.01" and r.headers["retry-after-ms"] == "10"
    assert set(r.json()["error"]) >= {"message", "type", "code"}
    # third hit of the rule: answered normally
    assert chat(srv, "hi").choices[0].message.content == "fine"

    srv.set_script({"rules": [{"match": ".", "reply": "fine", "faults": [{"kind": "429", "times": 2, "retry_after": 0.01}]}]})
    srv.reset()
    r = oai(srv, max_retries=2).chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.content == "fine"
    st = srv.stats()
    assert st["total_requests"] == 3 and st["faults"] == {"429": 2} and st["completed"] == 1


def test_on_hits_faults_and_http_status_kinds(srv):
    srv.set_script({"rules": [{"match": ".", "faults": [{"kind": "500", "on_hits": [1, 3]}]}]})
    with raw() as c:
        statuses = [c.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER}).status_code for _ in range(4)]
    assert statuses == [500, 200, 500, 200]
    expected = {"400": openai.BadRequestError, "401": openai.AuthenticationError, "500": openai.InternalServerError,
                "503": openai.InternalServerError}
    for kind, exc in expected.items():
        srv.set_script({"rules": [{"match": ".", "faults": [{"kind": kind}]}]})
        with pytest.raises(exc) as ei:
            chat(srv, "x")
        assert ei.value.status_code == int(kind)


def test_anthropic_error_shapes(srv):
    srv.set_script({"rules": [{"match": "rl", "faults": [{"kind": "429", "times": 5}]},
                              {"match": "ov", "faults": [{"kind": "529", "times": 5}]},
                              {"match": "ie", "faults": [{"kind": "500", "times": 5}]}]})
    msg = lambda t: dict(model="c", max_tokens=10, messages=[{"role": "user", "content": t}])  # noqa: E731
    with pytest.raises(anthropic.RateLimitError):
        ant(srv).messages.create(**msg("rl"))
    with pytest.raises(anthropic.APIStatusError) as ei:
        ant(srv).messages.create(**msg("ov"))
    assert ei.value.status_code == 529
    with raw() as c:
        for text, status, etype in [("rl", 429, "rate_limit_error"), ("ov", 529, "overloaded_error"), ("ie", 500, "api_error")]:
            r = c.post(srv.anthropic_base_url + "/v1/messages", json=msg(text))
            assert r.status_code == status
            assert r.json() == {"type": "error", "error": {"type": etype, "message": "fakellm injected fault " + str(status)}}


def test_malformed_body(srv):
    srv.set_script({"rules": [{"match": ".", "faults": [{"kind": "malformed", "times": 10}]}]})
    with raw() as c:
        r = c.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER})
    assert r.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(r.content)
    # the SDK does not wrap this: the JSON decode error escapes from create()
    with pytest.raises(json.JSONDecodeError):
        chat(srv, "x")
    assert srv.stats()["faults"] == {"malformed": 2}


def test_truncated_body(srv):
    srv.set_script({"rules": [{"match": ".", "faults": [{"kind": "truncated", "times": 10}]}]})
    data = raw_exchange(srv.port, {"model": "m", "messages": USER})
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    declared = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
    assert 0 < len(body) < declared
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)
    with pytest.raises(openai.APIConnectionError):
        chat(srv, "x")


def test_disconnect_and_empty(srv):
    srv.set_script({"rules": [{"match": "drop", "faults": [{"kind": "disconnect", "times": 10}]},
                              {"match": "empty", "reply": "not this", "faults": [{"kind": "empty", "times": 10}]}]})
    assert raw_exchange(srv.port, {"model": "m", "messages": [{"role": "user", "content": "drop"}]}) == b""
    with pytest.raises(openai.APIConnectionError):
        chat(srv, "drop")
    r = chat(srv, "empty")
    assert r.choices[0].message.content == "" and r.choices[0].finish_reason == "stop"
    st = srv.stats()
    assert st["faults"] == {"disconnect": 2, "empty": 1} and st["completed"] == 0


def test_timeout_fault_does_not_block_other_requests(srv):
    srv.set_script({"rules": [{"match": "hang", "faults": [{"kind": "timeout", "times": 10}]}], "default": {"reply": "alive"}})
    errors: list[BaseException] = []

    def hanging():
        try:
            oai(srv, timeout=0.5).chat.completions.create(model="m", messages=[{"role": "user", "content": "hang"}])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=hanging)
    t.start()
    srv.wait_for(lambda s: s["faults"].get("timeout") == 1)
    assert chat(srv, "normal").choices[0].message.content == "alive"
    t.join(10)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], openai.APITimeoutError)
    srv.wait_for(lambda s: s["cancelled"] == 1 and s["in_flight"] == 0)  # server saw the client hang up
    hang_rec, ok_rec = srv.requests
    assert hang_rec["outcome"] == "timeout" and ok_rec["outcome"] == "ok"
    assert ok_rec["t_done"] < hang_rec["t_cancelled"]


def test_stop_drops_hanging_requests():
    server = FakeLLMServer({"default": {"faults": [{"kind": "timeout", "times": 10}]}}).start()
    errors: list[BaseException] = []

    def hanging():
        try:
            oai(server, timeout=60).chat.completions.create(model="m", messages=USER)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=hanging)
    t.start()
    server.wait_for(lambda s: s["faults"].get("timeout") == 1)
    server.stop()
    t.join(10)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], openai.APIConnectionError)
    assert not isinstance(errors[0], openai.APITimeoutError)


def test_stop_drops_held_requests():
    server = FakeLLMServer({"max_responses": 0}).start()
    errors: list[BaseException] = []

    def held():
        try:
            chat(server, "wait")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=held)
    t.start()
    server.wait_for(lambda s: s["held"] == 1)
    server.stop()
    t.join(10)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], openai.APIConnectionError)
    st = server.stats()
    assert st["dropped"] == 1 and st["held"] == 0 and st["completed"] == 0


def test_script_validation(srv):
    for bad in ({"rules": [{"mtach": "x"}]}, {"rules": [{"faults": [{"kind": "418"}]}]}, {"fault_rat": 0.1},
                {"rules": [{"match": "("}]}):
        with pytest.raises(Exception) as ei:
            srv.set_script(bad)
        assert isinstance(ei.value, (ValueError, re.error))
    assert chat(srv, "x").choices[0].message.content == "\\boxed{A}"  # old script still active


def test_random_faults_are_seeded(srv):
    script = {"fault_rate": 0.5, "fault_kind": "503", "seed": 7}

    def run() -> list[int]:
        with raw() as c:
            return [c.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": USER}).status_code for _ in range(30)]

    srv.set_script(script)
    first = run()
    srv.set_script(script)
    assert run() == first
    assert set(first) == {200, 503}
    assert srv.stats()["faults"]["503"] == 2 * first.count(503)


# ------------------------------------------------------------------ holding and concurrency


def test_max_responses_holds_until_release(srv):
    srv.set_script({"max_responses": 2, "default": {"reply": "ok"}})
    assert chat(srv, "one").choices[0].message.content == "ok"
    assert chat(srv, "two").choices[0].message.content == "ok"
    results: list[str] = []
    t = threading.Thread(target=lambda: results.append(chat(srv, "three").choices[0].message.content))
    t.start()
    st = srv.wait_for(lambda s: s["held"] == 1)
    assert st["completed"] == 2 and st["in_flight"] == 1
    assert t.is_alive() and results == []
    srv.release()
    t.join(10)
    assert results == ["ok"]
    assert srv.count() == 3
    assert chat(srv, "four").choices[0].message.content == "ok"  # hold lifted after release


def test_concurrent_requests_overlap(srv):
    # the barrier answers nothing until all 50 requests are held at once: the server must take them together
    srv.set_script({"barrier": 50, "default": {"reply": "together"}})

    async def main() -> list[str]:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=30)
        try:
            rs = await asyncio.gather(
                *(client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"q{i}"}]) for i in range(50))
            )
        finally:
            await client.close()
        return [r.choices[0].message.content for r in rs]

    assert asyncio.run(main()) == ["together"] * 50
    st = srv.stats()
    assert st["completed"] == 50 and st["in_flight"] == 0 and st["held"] == 0
    assert st["max_in_flight"] == 50


def test_barrier_lets_batches_through_and_release_lets_a_partial_batch_go(srv):
    srv.set_script({"barrier": 2, "default": {"reply": "ok"}})
    results: list[str] = []

    def ask(content: str) -> threading.Thread:
        t = threading.Thread(target=lambda: results.append(chat(srv, content).choices[0].message.content))
        t.start()
        return t

    first = ask("one")
    assert srv.wait_for(lambda s: s["held"] == 1)["completed"] == 0
    second = ask("two")  # completes the batch of two
    first.join(10), second.join(10)
    assert results == ["ok", "ok"] and srv.stats()["completed"] == 2
    third = ask("three")  # a new batch: held alone until release
    assert srv.wait_for(lambda s: s["held"] == 1)["completed"] == 2
    srv.release()
    third.join(10)
    assert results == ["ok"] * 3
    assert chat(srv, "four").choices[0].message.content == "ok"  # the barrier is lifted after release
    with pytest.raises(ValueError, match="barrier"):
        srv.set_script({"barrier": -1})


def test_spawn_subprocess():
    handle = spawn({"default": {"reply": "from child"}})
    try:
        assert handle.proc.poll() is None
        r = openai.OpenAI(base_url=handle.base_url, api_key="k", max_retries=0, timeout=10).chat.completions.create(
            model="m", messages=USER
        )
        assert r.choices[0].message.content == "from child"
        st = handle.stats()
        assert st["completed"] == 1 and st["total_requests"] == 1
        assert handle.requests[0]["body"] is None  # spawned with keep_bodies=False
        handle.set_script({"default": {"reply": "changed"}})
        m = anthropic.Anthropic(base_url=handle.anthropic_base_url, api_key="k", max_retries=0).messages.create(
            model="m", max_tokens=10, messages=USER
        )
        assert m.content[0].text == "changed"
    finally:
        handle.stop()
    assert handle.proc.poll() is not None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", handle.port), timeout=2).close()
