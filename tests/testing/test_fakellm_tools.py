"""Scripted tool calls in the fake LLM server: every protocol through the official SDKs and Inspect AI agent loops."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import pytest
from helpers.fakellm import srv  # noqa: F401 - a fixture
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool

from theorembench.testing.fakellm import FakeLLMServer

ADD_CALL = {"tool_calls": [{"name": "addition", "arguments": {"x": 2, "y": 40}}]}
# the tool result "42" is what moves the conversation on; the question itself holds no 42
AGENT_SCRIPT = {
    "rules": [
        {"match": "42", "reply": "The answer is 42", "usage": {"prompt_tokens": 30, "completion_tokens": 5}},
        {"match": "What is 2 \\+ 40", "reply": ADD_CALL, "usage": {"prompt_tokens": 20, "completion_tokens": 9}},
    ]
}
CALC_TOOL = {
    "type": "function",
    "function": {
        "name": "calc",
        "description": "Evaluate an arithmetic expression.",
        "parameters": {"type": "object", "properties": {"expr": {"type": "string"}}, "required": ["expr"]},
    },
}


@tool
def addition():
    async def execute(x: int, y: int) -> int:
        """Add two integers.

        Args:
            x: The first summand.
            y: The second summand.

        Returns:
            The sum.
        """
        return x + y

    return execute


def oai(server: FakeLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, timeout=10)


def ant(server: FakeLLMServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="test-key", max_retries=0, timeout=10)


# ------------------------------------------------------------------ OpenAI chat completions


def test_chat_tool_call_then_tool_result_reply(srv):
    srv.set_script({"rules": [
        {"match": "RESULT=1764", "reply": "It is 1764."},
        {"match": "square", "reply": {"content": "Let me compute.", "tool_calls": [
            {"name": "calc", "arguments": {"expr": "42*42"}},
            {"name": "calc", "arguments": {"expr": "0"}, "id": "my-id"}]},
         "usage": {"prompt_tokens": 17, "completion_tokens": 8}},
    ]})  # fmt: skip
    messages = [{"role": "user", "content": "What is the square of 42?"}]
    with oai(srv) as client:
        first = client.chat.completions.create(model="m", messages=messages, tools=[CALC_TOOL])
        msg = first.choices[0].message
        assert first.choices[0].finish_reason == "tool_calls"
        assert msg.content == "Let me compute."
        assert [(c.id, c.type, c.function.name) for c in msg.tool_calls] == [
            ("call_1_0_0", "function", "calc"),
            ("my-id", "function", "calc"),
        ]
        assert json.loads(msg.tool_calls[0].function.arguments) == {"expr": "42*42"}
        assert json.loads(msg.tool_calls[1].function.arguments) == {"expr": "0"}
        assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (17, 8)

        messages += [
            msg.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "call_1_0_0", "content": "RESULT=1764"},
            {"role": "tool", "tool_call_id": "my-id", "content": "RESULT=0"},
        ]
        second = client.chat.completions.create(model="m", messages=messages, tools=[CALC_TOOL])
    assert second.choices[0].message.content == "It is 1764."
    assert second.choices[0].finish_reason == "stop" and second.choices[0].message.tool_calls is None
    log = srv.requests
    assert [r["rule"] for r in log] == [1, 0]
    assert log[0]["tools"] == [
        {
            "name": "calc",
            "description": "Evaluate an arithmetic expression.",
            "parameters": {"type": "object", "properties": {"expr": {"type": "string"}}, "required": ["expr"]},
        }
    ]


def test_chat_tool_call_streamed(srv):
    long_code = "print('" + "x" * 150 + "')"  # arguments longer than one stream piece
    srv.set_script({"default": {"reply": {"tool_calls": [
        {"name": "python", "arguments": {"code": long_code}},
        {"name": "bash", "arguments": {"cmd": "ls"}}]}}})  # fmt: skip
    with oai(srv) as client:
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "run it"}], stream=True, tools=[CALC_TOOL]
        )
        calls: dict[int, dict[str, str]] = {}
        content, finish = "", None
        for chunk in stream:
            for choice in chunk.choices:
                content += choice.delta.content or ""
                finish = choice.finish_reason or finish
                for d in choice.delta.tool_calls or []:
                    entry = calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
                    entry["id"] += d.id or ""
                    entry["name"] += (d.function.name or "") if d.function else ""
                    entry["arguments"] += (d.function.arguments or "") if d.function else ""
    assert content == "" and finish == "tool_calls"
    assert [(calls[i]["id"], calls[i]["name"]) for i in (0, 1)] == [
        ("call_default_0_0", "python"),
        ("call_default_0_1", "bash"),
    ]
    assert json.loads(calls[0]["arguments"]) == {"code": long_code}
    assert json.loads(calls[1]["arguments"]) == {"cmd": "ls"}


def test_reply_sequence_mixes_calls_and_text_and_ids_follow_answers(srv):
    srv.set_script({"default": {"reply": [ADD_CALL, ADD_CALL, "done"]}})
    with oai(srv) as client:
        out = [
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}]).choices[0]
            for _ in range(3)
        ]
    assert [c.message.tool_calls[0].id for c in out[:2]] == ["call_default_0_0", "call_default_1_0"]
    assert (out[2].message.content, out[2].message.tool_calls, out[2].finish_reason) == ("done", None, "stop")


def test_max_tokens_cut_drops_the_unfinished_tool_calls(srv):
    srv.set_script({"default": {"reply": {"content": "x" * 40, **ADD_CALL}}})
    with oai(srv) as client:
        r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}], max_tokens=2)
    assert r.choices[0].finish_reason == "length"
    assert r.choices[0].message.content == "x" * 8 and r.choices[0].message.tool_calls is None


# ------------------------------------------------------------------ OpenAI Responses


def test_responses_function_call_and_function_call_output(srv):
    srv.set_script({"rules": [
        {"match": "stdout: 1", "reply": "Printed 1."},
        {"reply": {"tool_calls": [{"name": "python", "arguments": {"code": "print(1)"}}]},
         "usage": {"prompt_tokens": 12, "completion_tokens": 6}},
    ]})  # fmt: skip
    tools = [{"type": "function", "name": "python", "description": "Run Python.",
              "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}]  # fmt: skip
    with oai(srv) as client:
        first = client.responses.create(model="m", input="print one", tools=tools)
        assert [item.type for item in first.output] == ["function_call"]
        call = first.output[0]
        assert (call.call_id, call.name, json.loads(call.arguments)) == ("call_1_0_0", "python", {"code": "print(1)"})
        assert (first.usage.input_tokens, first.usage.output_tokens) == (12, 6)
        second = client.responses.create(
            model="m",
            input=[
                {"role": "user", "content": "print one"},
                {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
                {"type": "function_call_output", "call_id": call.call_id, "output": "stdout: 1"},
            ],
            tools=tools,
        )
    assert second.output_text == "Printed 1."
    assert [r["rule"] for r in srv.requests] == [1, 0]
    assert [t["name"] for t in srv.requests[0]["tools"]] == ["python"]


# ------------------------------------------------------------------ Anthropic Messages


def test_anthropic_tool_use_and_tool_result(srv):
    srv.set_script({"rules": [
        {"match": "sum is 42", "reply": "The answer is 42"},
        {"reply": {"content": "Adding.", **ADD_CALL}, "usage": {"prompt_tokens": 21, "completion_tokens": 4}},
    ]})  # fmt: skip
    tools = [{"name": "addition", "description": "Add.",
              "input_schema": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}}}]  # fmt: skip
    messages: list[dict] = [{"role": "user", "content": "What is 2 + 40?"}]
    with ant(srv) as client:
        first = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
        assert first.stop_reason == "tool_use"
        assert [b.type for b in first.content] == ["text", "tool_use"]
        use = first.content[1]
        assert (first.content[0].text, use.id, use.name, use.input) == (
            "Adding.", "call_1_0_0", "addition", {"x": 2, "y": 40}
        )  # fmt: skip
        assert (first.usage.input_tokens, first.usage.output_tokens) == (21, 4)
        with client.messages.stream(model="claude-test", max_tokens=100, messages=messages, tools=tools) as stream:
            streamed = stream.get_final_message()
        assert streamed.stop_reason == "tool_use"
        assert [(b.type, getattr(b, "input", None)) for b in streamed.content] == [
            ("text", None),
            ("tool_use", {"x": 2, "y": 40}),
        ]
        messages += [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                          "content": [{"type": "text", "text": "sum is 42"}]}]},
        ]  # fmt: skip
        final = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
    assert (final.stop_reason, [b.text for b in final.content]) == ("end_turn", ["The answer is 42"])
    assert [r["rule"] for r in srv.requests] == [1, 1, 0]
    assert [t["name"] for t in srv.requests[0]["tools"]] == ["addition"]
    assert srv.requests[0]["tools"][0]["parameters"]["properties"]["x"] == {"type": "integer"}


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    "reply, message",
    [
        ({"tool_calls": [{"arguments": {"x": 1}}]}, "needs a 'name'"),
        ({"tool_calls": [{"name": "", "arguments": {}}]}, "needs a 'name'"),
        ({"tool_calls": [{"name": "python", "arguments": "print(1)"}]}, "'arguments' must be a JSON object"),
        ({"tool_calls": [{"name": "python", "arguments": [1]}]}, "'arguments' must be a JSON object"),
        ({"tool_calls": {"name": "python"}}, "tool_calls must be a list"),
        ({"tool_calls": ["python"]}, "must be a JSON object"),
        ({"text": "hi"}, "unknown reply keys"),
        ({"tool_calls": [{"name": "python", "args": {}}]}, "unknown keys"),
    ],
)
def test_bad_tool_call_specs_fail_when_the_script_loads(srv, reply, message):
    with pytest.raises(ValueError, match=message):
        FakeLLMServer({"rules": [{"match": "x", "reply": ["fine", reply]}]})
    with pytest.raises(ValueError, match=message):
        srv.set_script({"default": {"reply": reply}})
    r = httpx.post(srv.url + "/_script", json={"default": {"reply": reply}}, timeout=10)
    assert r.status_code == 400 and "rule default reply 0" in r.json()["error"]


# ------------------------------------------------------------------ Inspect AI agent loops


def agent_task() -> Task:
    return Task(
        dataset=[Sample(input="What is 2 + 40?", target="42")],
        solver=[use_tools(addition()), generate()],
        message_limit=10,  # a server that never saw the tool result would loop on the tool call
    )


def check_agent_log(log) -> None:
    assert log.status == "success", log.error
    sample = log.samples[0]
    assistants = [m for m in sample.messages if isinstance(m, ChatMessageAssistant)]
    tools = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert len(assistants) == 2 and len(tools) == 1
    (call,) = assistants[0].tool_calls
    assert (call.function, call.arguments) == ("addition", {"x": 2, "y": 40})
    assert tools[0].tool_call_id == call.id and tools[0].text == "42"
    assert not assistants[1].tool_calls
    assert sample.output.completion == "The answer is 42"


@pytest.mark.parametrize(
    "model_args, endpoint, stream",
    [({}, "chat", False), ({"stream": True}, "chat", True), ({"responses_api": True}, "responses", False)],
    ids=["chat", "chat-stream", "responses"],
)
def test_inspect_agent_loop_openai(fake_env, tmp_path, model_args, endpoint, stream):
    fake_env.set_script(AGENT_SCRIPT)
    (log,) = inspect_eval(
        agent_task(), model="openai-api/fake/m", model_args=model_args, log_dir=str(tmp_path / "logs"),
        display="none",
    )  # fmt: skip
    check_agent_log(log)
    usage = log.stats.model_usage["openai-api/fake/m"]
    assert (usage.input_tokens, usage.output_tokens) == (20 + 30, 9 + 5)
    log_entries = fake_env.requests
    assert [(r["endpoint"], r["stream"], r["rule"]) for r in log_entries] == [
        (endpoint, stream, 1),
        (endpoint, stream, 0),
    ]
    assert [[t["name"] for t in r["tools"]] for r in log_entries] == [["addition"], ["addition"]]
    assert set(log_entries[0]["tools"][0]["parameters"]["properties"]) == {"x", "y"}


def test_inspect_agent_loop_anthropic(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    fake.set_script(AGENT_SCRIPT)
    (log,) = inspect_eval(
        agent_task(), model="anthropic/claude-test", model_base_url=fake.anthropic_base_url,
        log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    check_agent_log(log)
    assert [(r["endpoint"], r["rule"]) for r in fake.requests] == [("messages", 1), ("messages", 0)]
    assert [t["name"] for t in fake.requests[0]["tools"]] == ["addition"]


# ------------------------------------------------------------------ malformed arguments

BAD_CALL = {"tool_calls": [{"name": "calc", "raw_arguments": "{not json", "id": "bad-1"}]}


def test_raw_arguments_go_verbatim_in_chat_plain_and_streamed(srv):
    srv.set_script({"default": {"reply": BAD_CALL}})
    with oai(srv) as client:
        plain = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}], stream=True)
        pieces = [d.function.arguments or "" for chunk in stream for c in chunk.choices
                  for d in c.delta.tool_calls or [] if d.function]  # fmt: skip
    (call,) = plain.choices[0].message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == ("bad-1", "calc", "{not json")
    assert plain.choices[0].finish_reason == "tool_calls"
    assert "".join(pieces) == "{not json"


def test_raw_arguments_go_verbatim_in_responses(srv):
    srv.set_script({"default": {"reply": BAD_CALL}})
    with oai(srv) as client:
        r = client.responses.create(model="m", input="go")
    assert [(i.type, i.call_id, i.arguments) for i in r.output] == [("function_call", "bad-1", "{not json")]


def test_raw_arguments_in_anthropic_are_the_input_string_which_the_streaming_sdk_refuses(srv):
    srv.set_script({"default": {"reply": BAD_CALL}})
    messages = [{"role": "user", "content": "go"}]
    with ant(srv) as client:
        plain = client.messages.create(model="c", max_tokens=100, messages=messages)
        assert [(b.type, b.input) for b in plain.content] == [("tool_use", "{not json")]
        with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
            with client.messages.stream(model="c", max_tokens=100, messages=messages) as stream:
                stream.get_final_message()


@pytest.mark.parametrize(
    "call, message",
    [
        ({"name": "python", "raw_arguments": "{", "arguments": {}}, "not both"),
        ({"name": "python", "raw_arguments": {"code": 1}}, "'raw_arguments' must be a string"),
    ],
)
def test_bad_raw_arguments_specs_fail_when_the_script_loads(call, message):
    with pytest.raises(ValueError, match=message):
        FakeLLMServer({"default": {"reply": {"tool_calls": [call]}}})


def test_inspect_gives_a_malformed_call_a_parsing_error_and_the_loop_goes_on(fake_env, tmp_path):
    fake_env.set_script({"rules": [
        {"match": "Error parsing", "reply": "The answer is 42"},
        {"match": "What is 2", "reply": {"tool_calls": [{"name": "addition", "raw_arguments": "{\"x\": 2, "}]}},
    ]})  # fmt: skip
    (log,) = inspect_eval(agent_task(), model="openai-api/fake/m", model_base_url=fake_env.base_url,
                          log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    assert log.status == "success", log.error
    msgs = log.samples[0].messages
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert msgs[1].tool_calls[0].parse_error is not None
    assert msgs[2].error is not None and msgs[2].error.type == "parsing"
    assert msgs[3].text == "The answer is 42"
    assert [r["rule"] for r in fake_env.requests] == [1, 0]


# ------------------------------------------------------------------ reasoning tokens in usage

REASONED = {"default": {"reply": "ok", "reasoning": "thinking hard", "usage": {"prompt_tokens": 11,
            "completion_tokens": 30, "reasoning_tokens": 12}}}  # fmt: skip


def test_usage_carries_reasoning_tokens_in_every_protocol(srv):
    srv.set_script(REASONED)
    messages = [{"role": "user", "content": "go"}]
    with oai(srv) as client:
        chat = client.chat.completions.create(model="m", messages=messages)
        streamed = [c.usage for c in client.chat.completions.create(
            model="m", messages=messages, stream=True, stream_options={"include_usage": True}) if c.usage]
        resp = client.responses.create(model="m", input="go")
    with ant(srv) as client:
        msg = client.messages.create(model="c", max_tokens=100, messages=messages)
        with client.messages.stream(model="c", max_tokens=100, messages=messages) as stream:
            final = stream.get_final_message()
    assert (chat.usage.completion_tokens, chat.usage.completion_tokens_details.reasoning_tokens) == (30, 12)
    assert [(u.completion_tokens, u.completion_tokens_details.reasoning_tokens) for u in streamed] == [(30, 12)]
    assert (resp.usage.output_tokens, resp.usage.output_tokens_details.reasoning_tokens) == (30, 12)
    assert (msg.usage.output_tokens, msg.usage.output_tokens_details.thinking_tokens) == (30, 12)
    assert (final.usage.output_tokens, final.usage.output_tokens_details.thinking_tokens) == (30, 12)


@pytest.mark.parametrize("provider", ["chat", "responses", "anthropic"])
def test_inspect_reads_the_reasoning_tokens(fake_env, tmp_path, monkeypatch, provider):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    fake_env.set_script(REASONED)
    model, args, url = {
        "chat": ("openai-api/fake/m", {}, fake_env.base_url),  # an explicit address: Inspect memoizes models
        "responses": ("openai-api/fake/m", {"responses_api": True}, fake_env.base_url),
        "anthropic": ("anthropic/claude-test", {}, fake_env.anthropic_base_url),
    }[provider]
    task = Task(dataset=[Sample(input="go")], solver=[generate()])
    (log,) = inspect_eval(task, model=model, model_args=args, model_base_url=url, max_tokens=1000,
                          log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    assert log.status == "success", log.error
    (usage,) = log.stats.model_usage.values()
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (11, 30, 12)
    assert len(fake_env.requests) == 1  # no token-counting round trip for Anthropic's thinking
