"""Scripted, fault-injecting fake LLM HTTP server (test double).

The server listens on 127.0.0.1 and speaks four wire protocols:

* OpenAI chat completions  (``POST /v1/chat/completions``; ``stream: true`` gives SSE)
* OpenAI Responses API      (``POST /v1/responses``; non-streaming only)
* Anthropic Messages API    (``POST /v1/messages``; ``stream: true`` gives SSE)
* OpenAI legacy completions (``POST /v1/completions``; non-streaming only), with
  ``echo`` and ``logprobs`` giving scripted per-token log-probabilities of the prompt

(each also without the ``/v1`` prefix), ``GET /v1/models``, the batch APIs of OpenAI
(``/v1/files``, ``/v1/batches``) and Anthropic (``/v1/messages/batches``), each batched
request answered as if sent alone (see :mod:`.batches`; script key ``batch_hold``), and JSON
control endpoints: ``GET /_stats``, ``GET /_requests``, ``POST /_script``,
``POST /_reset``, ``POST /_release``, ``POST /_release_batches``.

What it answers is driven by a *script* (a plain dict or a JSON file)::

    {
      "default": {"reply": "\\boxed{A}", "delay_ms": 0},        # any rule key except match/model
      "rules": [
        {"match": "regex, re.search(..., re.DOTALL) over the prompt text",
         "model": "optional exact model name",
         "reply": "text" | ["1st", "2nd", "..."],            # may contain {last_user}
         # or a tool-call reply (alone or as an element of a sequence):
         #   {"content": "optional text",
         #    "tool_calls": [{"name": "python", "arguments": {"code": "print(1)"}, "id": "optional"}]}
         #   (``"raw_arguments": "{not json"`` instead of ``arguments`` sends that string verbatim)
         "reasoning": "optional reasoning text" | [...],
         "delay_ms": 200,
         "faults": [{"kind": "429", "times": 2, "retry_after": 0.5}],
         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "reasoning_tokens": 3},
         "finish_reason": "stop"}
      ],
      "fault_rate": 0.0, "fault_kind": "500", "seed": 0,   # seeded random faults
      "max_responses": null, "barrier": 0,
      "echo": false,
      "models": ["optional", "list for /v1/models"],
      # legacy /v1/completions log-probabilities (see below)
      "logprob_rules": [{"match": "regex over one token", "logprob": -0.1}],
      "logprob_default": -2.0, "bos_token": null, "logprobs_mode": "echo"
    }

Semantics worth knowing:

* The first rule whose ``match``/``model`` fit wins, else ``default``.
* Reply/reasoning sequences are indexed by the rule's *answered* hits (hits that
  got no injected fault; ``empty`` counts as a fault), so a retry after a fault
  gets the element the faulted request would have got; the last element repeats.
* ``faults`` entries: ``times: N`` entries are consumed in order over the
  rule's hits (1-based); ``on_hits: [1, 3]`` entries name hits explicitly.
  Optional per-fault keys: ``retry_after`` (seconds; sent as ``Retry-After`` and
  ``retry-after-ms``), ``delay_ms``, ``message``, and for ``malformed`` ``body``
  and ``content_type`` (default application/json).
* Fault kinds: ``429 500 503 529 400 401`` (error JSON in the endpoint's
  shape), ``timeout`` (never answered until the client hangs up or the server
  stops), ``truncated`` (Content-Length larger than the half body sent, then
  close), ``malformed`` (200, body not JSON), ``disconnect`` (close without a
  response), ``empty`` (200, valid envelope, empty text).
* ``max_responses``: once that many requests under the current script were
  admitted for a normal answer, every further request is held.  ``release()``
  answers the held ones and lifts holding until the script is replaced or the
  server reset; ``stop()`` closes their connections instead.
* ``barrier: N``: every request is held until N requests are held together,
  then that batch goes on and the next N are gathered (a test proves N
  requests were in flight at once without timing them).  ``release()`` lets a
  partial batch go and lifts the barrier as it lifts ``max_responses``.
* Usage: ``prompt_tokens`` (default about 4 characters a token of the prompt),
  ``completion_tokens`` (default: text, tool calls and reasoning) and
  ``reasoning_tokens`` (default: the reasoning text's length / 4). As the real
  APIs do, the completion count *includes* the reasoning tokens and each
  protocol also gives them apart: ``usage.completion_tokens_details.reasoning_tokens``
  (chat), ``usage.output_tokens_details.reasoning_tokens`` (Responses) and
  ``usage.output_tokens_details.thinking_tokens`` (Anthropic, in the message and
  in the streamed ``message_delta``; older Anthropic SDKs ignore the field).
* ``delay_ms`` is an ``asyncio.sleep`` in the handler (applies to faults too).
* Tool calls: a reply ``{"content": ..., "tool_calls": [...]}`` answers with
  ``message.tool_calls`` (``type: function``, ``function.arguments`` a JSON
  string, ``finish_reason: "tool_calls"``; streamed as ``delta.tool_calls``) in
  chat completions, ``function_call`` output items (``call_id``, ``name``,
  ``arguments``) in the Responses API, and ``tool_use`` blocks (``id``, ``name``,
  ``input``; ``stop_reason: "tool_use"``, streamed as ``input_json_delta``) in
  Anthropic messages; text, when there is any, comes first.  A call needs a
  ``name``; ``arguments`` (default ``{}``) must be a JSON object; a bad spec is
  a ``ValueError`` when the script loads.  Malformed arguments: a call with
  ``raw_arguments`` (a string, instead of ``arguments``) carries that string
  verbatim as ``function.arguments`` (chat, also streamed) and ``arguments``
  (Responses).  Anthropic's ``input`` is a JSON object in the protocol, so it
  cannot hold invalid JSON: there the string itself is sent as ``input`` (and
  streamed as the ``partial_json`` pieces), something a real server never does;
  what a client makes of it is the client's own (the Anthropic SDK keeps the
  string when not streaming and raises ``ValueError`` when streaming; Inspect
  AI's Anthropic provider fails the model call either way, while its OpenAI
  providers give the call a ``parse_error`` and the tool an error result).  An unscripted ``id`` is
  ``call_<rule>_<answer>_<index>`` (rule index or ``default``, the rule's
  answered count from 0, the call's position).  Scripted ``usage`` and
  ``finish_reason`` apply as for text; a ``max_tokens`` cut drops the calls.
  The matched prompt text includes tool results (``role: tool`` messages,
  ``function_call_output`` items, ``tool_result`` blocks), so a rule can answer
  "after the tool returned 42".  Each request log entry's ``tools`` lists the
  tools offered, as ``{"name", "description", "parameters"}`` for every protocol.

Legacy completions (``/v1/completions``): ``prompt`` (a string, or a list of
strings giving one choice each) is what rules match; the reply is the rule's
reply (cut to ``max_tokens``, 4 characters a token; ``max_tokens: 0`` gives no
text), ``echo: true`` puts the prompt in front of it.  With ``logprobs: N`` set,
``choices[].logprobs`` holds ``tokens``, ``token_logprobs``, ``text_offset`` and
``top_logprobs`` over pseudo-tokens: the text cut by :func:`pseudo_tokens` into
word pieces that keep their leading whitespace (``"Let X be"`` ->
``["Let", " X", " be"]``; every punctuation or other symbol is a token of its
own).  A token's log-probability is that of the first ``logprob_rules`` entry
whose ``match`` finds (``re.search``) something in the token, else
``logprob_default`` (-2.0).  As vLLM does with ``echo``, the first prompt token
gets ``null`` and ``text_offset`` is the running sum of token lengths from 0;
``bos_token`` (e.g. ``"<s>"``) puts that pseudo-token, not part of the text, in
front of the prompt tokens (so offsets count it, as vLLM's do).
``logprobs_mode``: ``echo`` (default, as above), ``generated`` (log-probs of the
generated tokens only, whatever ``echo`` says) or ``none`` (``logprobs: null``
always: a server without prompt log-probabilities).  ``top_logprobs`` entries
are ``{token: logprob}`` of the token itself.

See :class:`FakeLLMServer` for the in-process server and :func:`spawn` for
running it in a child process (``python -m theorembench.testing.fakellm``).

Modules: ``script`` (rules, replies, faults, latency), ``tool_calls`` (tool-call
replies and offered tools), ``prompts`` (request inspection), ``recording``
(counters and request log), ``request_handling`` (the LLM request pipeline and
fault injection), one module per protocol (``openai_chat``, ``openai_responses``,
``openai_completions``, ``anthropic_messages``), ``wire`` (shared HTTP helpers),
``server`` (the aiohttp server) and ``spawn`` (child-process mode).
"""

from __future__ import annotations

from theorembench.testing.fakellm.prompts import last_user_text, prompt_key, prompt_text, pseudo_tokens
from theorembench.testing.fakellm.script import FAULT_KINDS, load_script
from theorembench.testing.fakellm.server import FakeLLMServer
from theorembench.testing.fakellm.spawn import SpawnedFakeLLM, spawn

__all__ = [
    "FAULT_KINDS",
    "FakeLLMServer",
    "SpawnedFakeLLM",
    "load_script",
    "prompt_key",
    "prompt_text",
    "last_user_text",
    "pseudo_tokens",
    "spawn",
]
