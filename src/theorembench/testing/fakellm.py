"""Scripted, fault-injecting fake LLM HTTP server (test double).

The server listens on 127.0.0.1 and speaks four wire protocols:

* OpenAI chat completions  (``POST /v1/chat/completions``; ``stream: true`` gives SSE)
* OpenAI Responses API      (``POST /v1/responses``; non-streaming only)
* Anthropic Messages API    (``POST /v1/messages``; ``stream: true`` gives SSE)
* OpenAI legacy completions (``POST /v1/completions``; non-streaming only), with
  ``echo`` and ``logprobs`` giving scripted per-token log-probabilities of the prompt

(each also without the ``/v1`` prefix), ``GET /v1/models``, and JSON control
endpoints: ``GET /_stats``, ``GET /_requests``, ``POST /_script``,
``POST /_reset``, ``POST /_release``.

What it answers is driven by a *script* (a plain dict or a JSON file)::

    {
      "default": {"reply": "\\boxed{A}", "delay_ms": 0},        # any rule key except match/model
      "rules": [
        {"match": "regex, re.search(..., re.DOTALL) over the prompt text",
         "model": "optional exact model name",
         "reply": "text" | ["1st", "2nd", "..."],            # may contain {last_user}
         "reasoning": "optional reasoning text" | [...],
         "delay_ms": 200,
         "faults": [{"kind": "429", "times": 2, "retry_after": 0.5}],
         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "reasoning_tokens": 3},
         "finish_reason": "stop"}
      ],
      "fault_rate": 0.0, "fault_kind": "500", "seed": 0,   # seeded random faults
      "max_responses": null,
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
* ``delay_ms`` is an ``asyncio.sleep`` in the handler (applies to faults too).

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
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from aiohttp import web

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

#: Fault kinds understood in ``faults[].kind`` and ``fault_kind``.
FAULT_KINDS = frozenset(
    {"429", "500", "503", "529", "400", "401", "timeout", "truncated", "malformed", "disconnect", "empty"}
)
_HTTP_FAULTS = {"429": 429, "500": 500, "503": 503, "529": 529, "400": 400, "401": 401}

_DEFAULT_REPLY = "\\boxed{A}"
_DEFAULT_MODELS = ["fake-model"]

# API flavours handled by the LLM endpoints.
_CHAT = "chat"
_RESPONSES = "responses"
_MESSAGES = "messages"
_COMPLETIONS = "completions"

_OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", "service_unavailable"),
    529: ("server_error", "overloaded"),
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}


# --------------------------------------------------------------------------------------
# Request inspection helpers
# --------------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    """Flatten message content (string, list of parts/blocks, nested content) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (_text_of(c) for c in content) if t)
    if isinstance(content, dict):
        text = content.get("text")
        if isinstance(text, str):
            return text
        for key in ("content", "output"):
            if key in content:
                return _text_of(content[key])
        return ""
    return ""


def _messages_of(body: Mapping[str, Any]) -> list[Any]:
    """Conversation items of a request: ``messages`` or the Responses ``input``."""
    messages = body.get("messages")
    if isinstance(messages, list):
        return messages
    inp = body.get("input")
    if isinstance(inp, str):
        return [{"role": "user", "content": inp}]
    if isinstance(inp, list):
        return inp
    return []


def _completion_prompts(body: Mapping[str, Any]) -> list[str]:
    """The legacy completions ``prompt`` as a list of strings ([] when absent)."""
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return [prompt]
    if isinstance(prompt, list):
        return [p if isinstance(p, str) else json.dumps(p) for p in prompt]
    return []


def prompt_text(body: Mapping[str, Any]) -> str:
    """All prompt text of a request body, joined with newlines.

    Covers the top-level Anthropic ``system`` (string or blocks), the Responses
    ``instructions``, every message / input item (string content or parts), and
    the legacy completions ``prompt`` (string or list of strings).
    """
    parts = [_text_of(body.get("system")), _text_of(body.get("instructions"))]
    parts.extend(_text_of(m.get("content", m) if isinstance(m, dict) else m) for m in _messages_of(body))
    parts.extend(_completion_prompts(body))
    return "\n".join(p for p in parts if p)


def last_user_text(body: Mapping[str, Any]) -> str:
    """Text of the last ``role == "user"`` message/input item ("" if none)."""
    for m in reversed(_messages_of(body)):
        if isinstance(m, dict) and m.get("role") == "user":
            return _text_of(m.get("content"))
        if isinstance(m, str):
            return m
    prompts = _completion_prompts(body)  # legacy completions: the (last) prompt
    return prompts[-1] if prompts else ""


def prompt_key(body: Mapping[str, Any]) -> str:
    """sha256 hex digest of the JSON of (model, system, instructions, messages, input),
    with the legacy completions ``prompt`` appended when the body has one."""
    payload = [
        body.get("model"),
        body.get("system"),
        body.get("instructions"),
        body.get("messages"),
        body.get("input"),
    ]
    if "prompt" in body:
        payload.append(body.get("prompt"))
    raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _approx_tokens(text: str) -> int:
    return len(text) // 4 + 1


_PSEUDO_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")


def pseudo_tokens(text: str) -> list[str]:
    """Cut ``text`` into the fake server's log-prob tokens; ``"".join(...) == text``.

    A token is a run of word characters or one other non-space character, each
    with the whitespace in front of it; trailing whitespace is a token of its own.
    """
    return _PSEUDO_TOKEN.findall(text)


# --------------------------------------------------------------------------------------
# Script compilation
# --------------------------------------------------------------------------------------


def load_script(source: str | os.PathLike[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """Return a script dict from a dict (copied), a JSON file path, or None (empty script)."""
    if source is None:
        return {}
    if isinstance(source, Mapping):
        return json.loads(json.dumps(source))  # deep copy, and proves it is JSON-able
    with open(source, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"script file {source!s} must hold a JSON object")
    return data


_FAULT_KEYS = frozenset({"kind", "times", "on_hits", "retry_after", "delay_ms", "message", "content_type", "body"})
_RULE_KEYS = frozenset({"match", "model", "reply", "reasoning", "delay_ms", "faults", "usage", "finish_reason"})
_SCRIPT_KEYS = frozenset(
    {"default", "rules", "fault_rate", "fault_kind", "seed", "max_responses", "echo", "models",
     "logprob_rules", "logprob_default", "bos_token", "logprobs_mode"}
)  # fmt: skip
_LOGPROB_RULE_KEYS = frozenset({"match", "logprob"})
_LOGPROBS_MODES = ("echo", "generated", "none")


def _check_keys(what: str, spec: Mapping[str, Any], allowed: frozenset[str]) -> None:
    if not isinstance(spec, Mapping):
        raise ValueError(f"{what} must be a JSON object, got {type(spec).__name__}")
    unknown = set(spec) - allowed
    if unknown:
        raise ValueError(f"unknown {what} keys {sorted(unknown)}; allowed: {sorted(allowed)}")


class _Fault:
    __slots__ = ("kind", "times", "on_hits", "retry_after", "delay_ms", "message", "content_type", "body")

    def __init__(self, spec: Mapping[str, Any] | str):
        if isinstance(spec, str):
            spec = {"kind": spec}
        _check_keys("fault", spec, _FAULT_KEYS)
        kind = str(spec.get("kind", ""))
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {sorted(FAULT_KINDS)}")
        self.kind = kind
        self.times = int(spec["times"]) if spec.get("times") is not None else None
        on_hits = spec.get("on_hits")
        self.on_hits = frozenset(int(h) for h in on_hits) if on_hits is not None else None
        if self.times is None and self.on_hits is None:
            self.times = 1
        ra = spec.get("retry_after")
        self.retry_after = float(ra) if ra is not None else None
        self.delay_ms = float(spec["delay_ms"]) if spec.get("delay_ms") is not None else None
        self.message = spec.get("message")
        self.content_type = str(spec.get("content_type", "application/json"))
        self.body = spec.get("body")


class _Rule:
    __slots__ = (
        "label",
        "pattern",
        "model",
        "replies",
        "reasonings",
        "delay_ms",
        "faults",
        "usage",
        "finish_reason",
        "echo",
        "hits",
        "answered",
    )

    def __init__(self, label: str, spec: Mapping[str, Any], *, is_default: bool = False):
        _check_keys(f"rule {label}", spec, _RULE_KEYS)
        self.label = label
        pattern = spec.get("match")
        self.pattern = re.compile(pattern, re.DOTALL) if pattern is not None else None
        self.model = spec.get("model")
        reply = spec.get("reply", _DEFAULT_REPLY if is_default else "")
        self.replies = [str(r) for r in reply] if isinstance(reply, list) else [str(reply)]
        if not self.replies:
            self.replies = [""]
        reasoning = spec.get("reasoning")
        if reasoning is None:
            self.reasonings: list[str] | None = None
        else:
            self.reasonings = [str(r) for r in reasoning] if isinstance(reasoning, list) else [str(reasoning)]
        self.delay_ms = float(spec.get("delay_ms") or 0)
        self.faults = [_Fault(f) for f in spec.get("faults") or []]
        self.usage = dict(spec.get("usage") or {})
        self.finish_reason = spec.get("finish_reason")
        self.echo = False  # set on the default rule by the script's ``echo`` flag
        self.hits = 0  # every request that matched this rule
        self.answered = 0  # matched requests that were not faulted (indexes reply sequences)

    def matches(self, text: str, model: str) -> bool:
        if self.model is not None and self.model != model:
            return False
        return self.pattern is None or self.pattern.search(text) is not None

    def fault_for(self, hit: int) -> _Fault | None:
        """Scripted fault for the ``hit``-th (1-based) match of this rule.

        ``on_hits`` entries are absolute; ``times`` entries are consumed in order
        (``[{"kind":"429","times":2},{"kind":"500","times":1}]`` → hits 1-2 get 429, hit 3 gets 500).
        """
        start = 0
        for f in self.faults:
            if f.on_hits is not None:
                if hit in f.on_hits:
                    return f
                continue
            assert f.times is not None
            if start < hit <= start + f.times:
                return f
            start += f.times
        return None


class _Script:
    def __init__(self, raw: Mapping[str, Any] | None):
        raw = dict(raw or {})
        _check_keys("script", raw, _SCRIPT_KEYS)
        self.raw = raw
        self.echo = bool(raw.get("echo", False))
        default_spec = dict(raw.get("default") or {})
        self.default = _Rule("default", default_spec, is_default=True)
        # ``echo`` replaces the default reply with the last user message.
        self.default.echo = self.echo
        self.rules = [_Rule(str(i), spec) for i, spec in enumerate(raw.get("rules") or [])]
        self.fault_rate = float(raw.get("fault_rate") or 0.0)
        fk = raw.get("fault_kind", "500")
        self.fault_kinds = [_Fault({"kind": k, "times": 1}) for k in (fk if isinstance(fk, list) else [fk])]
        self.rng = random.Random(raw.get("seed", 0))
        mr = raw.get("max_responses")
        self.max_responses = int(mr) if mr is not None else None
        self.admitted = 0  # requests admitted for an ok answer under this script (max_responses budget)
        models = raw.get("models")
        if models:
            self.models = [str(m) for m in models]
        else:
            seen = [r.model for r in self.rules if r.model] + ([self.default.model] if self.default.model else [])
            self.models = list(dict.fromkeys(seen)) or list(_DEFAULT_MODELS)
        # legacy completions log-probabilities
        self.logprob_rules: list[tuple[re.Pattern[str], float]] = []
        for i, spec in enumerate(raw.get("logprob_rules") or []):
            _check_keys(f"logprob rule {i}", spec, _LOGPROB_RULE_KEYS)
            if "match" not in spec or "logprob" not in spec:
                raise ValueError(f"logprob rule {i} needs both 'match' and 'logprob'")
            self.logprob_rules.append((re.compile(str(spec["match"]), re.DOTALL), float(spec["logprob"])))
        self.logprob_default = float(raw.get("logprob_default", -2.0))
        bos = raw.get("bos_token")
        self.bos_token = str(bos) if bos else None
        self.logprobs_mode = str(raw.get("logprobs_mode") or "echo")
        if self.logprobs_mode not in _LOGPROBS_MODES:
            raise ValueError(f"unknown logprobs_mode {self.logprobs_mode!r}; expected one of {list(_LOGPROBS_MODES)}")

    def token_logprob(self, token: str) -> float:
        for pattern, logprob in self.logprob_rules:
            if pattern.search(token) is not None:
                return logprob
        return self.logprob_default

    def match(self, text: str, model: str) -> _Rule:
        for rule in self.rules:
            if rule.matches(text, model):
                return rule
        return self.default

    def random_fault(self) -> _Fault | None:
        if self.fault_rate <= 0:
            return None
        if self.rng.random() < self.fault_rate:
            return self.fault_kinds[0] if len(self.fault_kinds) == 1 else self.rng.choice(self.fault_kinds)
        return None


# --------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------


def _json_response(obj: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(
        body=json.dumps(obj, ensure_ascii=False).encode("utf-8"),
        status=status,
        headers=headers,
        content_type="application/json",
    )


def _fmt_seconds(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


class _Addresses:
    """URLs of a fake server, from its ``port``."""

    port: int

    @property
    def url(self) -> str:
        """Server root URL (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """Base URL for the OpenAI SDK (``http://127.0.0.1:PORT/v1``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for the Anthropic SDK (``http://127.0.0.1:PORT``)."""
        return self.url


class FakeLLMServer(_Addresses):
    """In-process fake LLM server (aiohttp on its own event loop in a daemon thread).

    Use as a context manager or call :meth:`start` / :meth:`stop`.  All public
    methods are thread-safe.  The state is also reachable over HTTP through the
    control endpoints, which is what :func:`spawn` handles use.
    """

    def __init__(
        self,
        script: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        *,
        port: int = 0,
        keep_bodies: bool = True,
    ) -> None:
        self._raw_script = load_script(script)
        self._script = _Script(self._raw_script)
        self._requested_port = int(port)
        self.keep_bodies = bool(keep_bodies)
        self._cond = threading.Condition(threading.Lock())
        self._ids = itertools.count(1)
        self._reset_counters()
        # event-loop side
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._wake: asyncio.Event | None = None
        self._release_gen = 0
        self._hold_lifted = False
        self._stopping = False
        self._port: int | None = None

    # ---------------------------------------------------------------- state ------------

    def _reset_counters(self) -> None:
        # caller holds the lock (or is the constructor)
        self._log: list[dict[str, Any]] = []
        self._total = 0
        self._completed = 0
        self._faults: dict[str, int] = {}
        self._rule_hits: dict[str, int] = {}
        self._key_requests: dict[str, int] = {}
        self._key_ok: dict[str, int] = {}
        self._endpoints: dict[str, int] = {}
        self._in_flight = 0
        self._max_in_flight = 0
        self._held = 0
        self._cancelled = 0
        self._dropped = 0
        self._bad_requests = 0

    def _stats_locked(self) -> dict[str, Any]:
        return {
            "total_requests": self._total,
            "completed": self._completed,
            "faults": dict(self._faults),
            "faults_total": sum(self._faults.values()),
            "rule_hits": dict(self._rule_hits),
            "prompt_keys": dict(self._key_requests),
            "prompt_keys_completed": dict(self._key_ok),
            "endpoints": dict(self._endpoints),
            "in_flight": self._in_flight,
            "max_in_flight": self._max_in_flight,
            "held": self._held,
            "cancelled": self._cancelled,
            "dropped": self._dropped,
            "bad_requests": self._bad_requests,
        }

    # ---------------------------------------------------------------- public API -------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("server not started")
        return self._port

    def stats(self) -> dict[str, Any]:
        """Counters, same document as ``GET /_stats``."""
        with self._cond:
            return self._stats_locked()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot (copies) of the per-request log, in arrival order."""
        with self._cond:
            return [dict(r) for r in self._log]

    def count(self, prompt_key: str | None = None, match: str | None = None) -> int:
        """Number of completed ``ok`` responses, optionally for one prompt key and/or
        whose last user message matches the regex ``match`` (re.search, DOTALL)."""
        pat = re.compile(match, re.DOTALL) if match is not None else None
        with self._cond:
            if pat is None:
                if prompt_key is None:
                    return self._completed
                return self._key_ok.get(prompt_key, 0)
            return sum(
                1
                for r in self._log
                if r["outcome"] == "ok"
                and (prompt_key is None or r["prompt_key"] == prompt_key)
                and pat.search(r["last_user"] or "") is not None
            )

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10) -> dict[str, Any]:
        """Block until ``predicate(stats())`` is true; return those stats.

        Woken on every request event (arrival, hold, fault, completion, end).
        Raises :class:`TimeoutError` after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                snapshot = self._stats_locked()
                if predicate(snapshot):
                    return snapshot
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"fakellm: condition not met within {timeout}s; stats={snapshot}")
                self._cond.wait(remaining)

    def set_script(self, script: Mapping[str, Any] | str | os.PathLike[str] | None) -> None:
        """Replace the script (rule hit counters and sequences start over; counters/log are kept)."""
        raw = load_script(script)
        compiled = _Script(raw)  # validate before swapping
        self._in_loop(self._swap_script, raw, compiled)

    def reset(self) -> None:
        """Clear counters and the request log; the script restarts from its first hit."""
        self._in_loop(self._do_reset)

    def release(self) -> None:
        """Answer every request held by ``max_responses``; further requests are not held
        until the script is replaced or the server is reset."""
        self._in_loop(self._do_release)

    def start(self) -> "FakeLLMServer":
        """Start serving in a daemon thread; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("server already started")
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            try:
                loop.run_until_complete(self._astart())
            except BaseException as exc:  # pragma: no cover - bind errors etc.
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="fakellm-server", daemon=True)
        self._thread.start()
        if not ready.wait(30):
            raise RuntimeError("fakellm server did not start within 30s")
        if errors:
            self._thread = None
            self._loop = None
            raise errors[0]
        return self

    def stop(self) -> None:
        """Drop held / hanging requests (their connections are closed) and shut down."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._astop(), loop).result(timeout=15)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=15)
            self._thread = None
            self._loop = None

    def __enter__(self) -> "FakeLLMServer":
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @classmethod
    def spawn(
        cls,
        script: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        keep_bodies: bool = False,
        *,
        port: int = 0,
        startup_timeout: float = 30.0,
    ) -> "SpawnedFakeLLM":
        """Run the server in a child process; see :func:`spawn`."""
        return spawn(script, keep_bodies=keep_bodies, port=port, startup_timeout=startup_timeout)

    # ---------------------------------------------------------------- loop plumbing ----

    def _in_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = self._loop
        if loop is None or not loop.is_running():
            return fn(*args)
        if threading.current_thread() is self._thread:
            return fn(*args)

        async def call() -> Any:
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(call(), loop).result(timeout=15)

    def _swap_script(self, raw: dict[str, Any], compiled: _Script) -> None:
        with self._cond:
            self._raw_script = raw
            self._script = compiled
            self._hold_lifted = False
            self._cond.notify_all()

    def _do_reset(self) -> None:
        with self._cond:
            self._script = _Script(self._raw_script)
            self._hold_lifted = False
            in_flight, held = self._in_flight, self._held
            self._reset_counters()
            # requests still running keep being tracked correctly
            self._in_flight, self._held = in_flight, held
            self._max_in_flight = in_flight
            self._cond.notify_all()

    def _do_release(self) -> None:
        self._hold_lifted = True
        self._release_gen += 1
        if self._wake is not None:
            self._wake.set()
            self._wake.clear()

    def _build_app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        r = app.router
        for prefix in ("/v1", ""):
            r.add_post(prefix + "/chat/completions", self._h_chat)
            r.add_post(prefix + "/responses", self._h_responses)
            r.add_post(prefix + "/messages", self._h_messages)
            r.add_post(prefix + "/completions", self._h_completions)
            r.add_get(prefix + "/models", self._h_models)
        r.add_get("/_stats", self._h_stats)
        r.add_get("/_requests", self._h_requests)
        r.add_post("/_script", self._h_script)
        r.add_post("/_reset", self._h_reset)
        r.add_post("/_release", self._h_release)
        return app

    async def _astart(self, host: str = "127.0.0.1") -> None:
        self._wake = asyncio.Event()
        self._stopping = False
        self._runner = web.AppRunner(
            self._build_app(),
            access_log=None,
            handle_signals=False,
            handler_cancellation=True,
            shutdown_timeout=1.0,
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, self._requested_port, backlog=1024)
        await site.start()
        self._port = int(self._runner.addresses[0][1])

    async def _astop(self) -> None:
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ---------------------------------------------------------------- control handlers -

    async def _h_stats(self, request: web.Request) -> web.Response:
        return _json_response(self.stats())

    async def _h_requests(self, request: web.Request) -> web.Response:
        return _json_response(self.requests)

    async def _h_script(self, request: web.Request) -> web.Response:
        try:
            raw = json.loads(await request.read())
            if not isinstance(raw, dict):
                raise ValueError("script must be a JSON object")
            compiled = _Script(raw)
        except (ValueError, TypeError, re.error) as exc:
            return _json_response({"ok": False, "error": str(exc)}, status=400)
        self._swap_script(raw, compiled)
        return _json_response({"ok": True})

    async def _h_reset(self, request: web.Request) -> web.Response:
        self._do_reset()
        return _json_response({"ok": True})

    async def _h_release(self, request: web.Request) -> web.Response:
        self._do_release()
        return _json_response({"ok": True})

    async def _h_models(self, request: web.Request) -> web.Response:
        data = [
            {
                "id": m,
                "object": "model",
                "created": 0,
                "owned_by": "fakellm",
                "type": "model",
                "display_name": m,
                "created_at": "1970-01-01T00:00:00Z",
            }
            for m in self._script.models
        ]
        return _json_response(
            {
                "object": "list",
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    # ---------------------------------------------------------------- LLM handlers -----

    async def _h_chat(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, _CHAT)

    async def _h_responses(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, _RESPONSES)

    async def _h_messages(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, _MESSAGES)

    async def _h_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, _COMPLETIONS)

    def _finish(self, rec: dict[str, Any], outcome: str, status: int | None) -> None:
        """Record a request's outcome (loop thread)."""
        with self._cond:
            rec["outcome"] = outcome
            rec["status"] = status
            rec["t_done"] = time.time()
            if outcome == "ok":
                self._completed += 1
                key = rec["prompt_key"]
                self._key_ok[key] = self._key_ok.get(key, 0) + 1
            elif outcome in FAULT_KINDS:
                self._faults[outcome] = self._faults.get(outcome, 0) + 1
            elif outcome == "dropped":
                self._dropped += 1
            elif outcome == "bad_request":
                self._bad_requests += 1
            self._cond.notify_all()

    async def _handle(self, request: web.Request, api: str) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("request body must be a JSON object")
        except ValueError as exc:
            with self._cond:
                self._total += 1
                self._bad_requests += 1
                self._cond.notify_all()
            return self._error(api, 400, f"fakellm: invalid JSON body: {exc}")

        model = str(body.get("model") or "")
        ptext = prompt_text(body)
        last = last_user_text(body)
        key = prompt_key(body)
        stream = bool(body.get("stream"))
        rec: dict[str, Any] = {
            "time": time.time(),
            "endpoint": api,
            "path": request.path,
            "model": model,
            "prompt_key": key,
            "last_user": last,
            "rule": None,
            "hit": None,
            "stream": stream,
            "outcome": "pending",
            "status": None,
            "t_done": None,
            "cancelled": False,
            "t_cancelled": None,
            "body": body if self.keep_bodies else None,
        }
        with self._cond:
            self._total += 1
            self._endpoints[api] = self._endpoints.get(api, 0) + 1
            self._key_requests[key] = self._key_requests.get(key, 0) + 1
            self._in_flight += 1
            if self._in_flight > self._max_in_flight:
                self._max_in_flight = self._in_flight
            self._log.append(rec)
            self._cond.notify_all()
        try:
            return await self._serve(request, api, body, rec, model, ptext, last, stream)
        except asyncio.CancelledError:
            # the client went away (handler cancellation) or the server is stopping
            with self._cond:
                rec["cancelled"] = True
                rec["t_cancelled"] = time.time()
                self._cancelled += 1
                if rec["outcome"] in ("pending", "held"):
                    rec["outcome"] = "cancelled"
                self._cond.notify_all()
            raise
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    async def _serve(
        self,
        request: web.Request,
        api: str,
        body: dict[str, Any],
        rec: dict[str, Any],
        model: str,
        ptext: str,
        last: str,
        stream: bool,
    ) -> web.StreamResponse:
        script = self._script
        # --- max_responses: hold everything beyond the budget until release/stop
        if (
            script.max_responses is not None
            and script.admitted >= script.max_responses
            and not self._hold_lifted
        ):
            gen = self._release_gen
            with self._cond:
                rec["outcome"] = "held"
                self._held += 1
                self._cond.notify_all()
            try:
                assert self._wake is not None
                while self._release_gen == gen and not self._stopping:
                    await self._wake.wait()
            finally:
                with self._cond:
                    self._held -= 1
                    if rec["outcome"] == "held":
                        rec["outcome"] = "pending"
                    self._cond.notify_all()
            if self._stopping:
                self._finish(rec, "dropped", None)
                return self._drop(request)
            script = self._script

        if api == _RESPONSES and stream:
            self._finish(rec, "bad_request", 400)
            return self._error(api, 400, "fakellm: streaming is not supported for the Responses API")
        if api == _COMPLETIONS and stream:
            self._finish(rec, "bad_request", 400)
            return self._error(api, 400, "fakellm: streaming is not supported for legacy completions")

        # --- rule matching and fault selection (no awaits: atomic w.r.t. other requests)
        rule = script.match(ptext, model)
        rule.hits += 1
        hit = rule.hits
        fault = rule.fault_for(hit) or script.random_fault()
        seq = None
        if fault is None:
            seq = rule.answered
            rule.answered += 1
            script.admitted += 1
        with self._cond:
            rec["rule"] = None if rule is script.default else int(rule.label)
            rec["hit"] = hit
            self._rule_hits[rule.label] = self._rule_hits.get(rule.label, 0) + 1

        delay_ms = fault.delay_ms if fault is not None and fault.delay_ms is not None else rule.delay_ms
        if delay_ms > 0:
            try:
                await asyncio.sleep(delay_ms / 1000.0)
            except asyncio.CancelledError:
                if fault is None:  # never answered: give the max_responses budget back
                    script.admitted -= 1
                raise

        if fault is not None and fault.kind != "empty":
            return await self._inject(request, api, rec, fault)

        # --- build the reply
        if fault is not None:  # "empty": valid envelope, empty content
            reply, reasoning = "", None
        else:
            assert seq is not None
            if rule.echo:
                reply = last
            else:
                reply = rule.replies[min(seq, len(rule.replies) - 1)]
            reasoning = None
            if rule.reasonings is not None:
                reasoning = rule.reasonings[min(seq, len(rule.reasonings) - 1)]
            if "{last_user}" in reply:
                reply = reply.replace("{last_user}", last)
            if reasoning and "{last_user}" in reasoning:
                reasoning = reasoning.replace("{last_user}", last)

        usage = rule.usage
        pt = int(usage.get("prompt_tokens", _approx_tokens(ptext)))
        rt = int(usage.get("reasoning_tokens", len(reasoning) // 4 if reasoning else 0))
        ct = int(usage.get("completion_tokens", _approx_tokens(reply) + rt))
        finish = rule.finish_reason or "stop"
        limit = self._max_tokens(api, body)
        if limit is not None and limit < ct:
            reply = reply[: 4 * max(limit, 0)]
            ct = max(limit, 0)
            rt = min(rt, ct)
            finish = "length"

        outcome = "empty" if fault is not None else "ok"
        n = 1
        if api == _CHAT:
            try:
                n = max(1, int(body.get("n") or 1))
            except (TypeError, ValueError):
                n = 1
        rid = next(self._ids)
        if stream and api == _CHAT:
            resp = await self._stream_chat(request, rid, model, n, reply, reasoning, finish, pt, ct, rt)
        elif stream and api == _MESSAGES:
            resp = await self._stream_messages(request, rid, model, reply, reasoning, finish, pt, ct)
        elif api == _CHAT:
            resp = _json_response(self._chat_body(rid, model, n, reply, reasoning, finish, pt, ct, rt))
        elif api == _RESPONSES:
            resp = _json_response(self._responses_body(rid, model, reply, reasoning, finish, pt, ct, rt, body))
        elif api == _COMPLETIONS:
            resp = _json_response(self._completions_body(script, rid, model, reply, finish, limit, body))
        else:
            resp = _json_response(self._messages_body(rid, model, reply, reasoning, finish, pt, ct))
        self._finish(rec, outcome, 200)
        return resp

    @staticmethod
    def _max_tokens(api: str, body: Mapping[str, Any]) -> int | None:
        if api == _CHAT:
            keys: Iterable[str] = ("max_completion_tokens", "max_tokens")
        elif api == _RESPONSES:
            keys = ("max_output_tokens",)
        else:
            keys = ("max_tokens",)
        for k in keys:
            v = body.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return int(v)
        return None

    # ---------------------------------------------------------------- faults -----------

    def _error(
        self, api: str, status: int, message: str, headers: Mapping[str, str] | None = None
    ) -> web.Response:
        if api == _MESSAGES:
            etype = _ANTHROPIC_ERRORS.get(status, "api_error")
            payload: dict[str, Any] = {"type": "error", "error": {"type": etype, "message": message}}
        else:
            etype, code = _OPENAI_ERRORS.get(status, ("server_error", None))
            payload = {"error": {"message": message, "type": etype, "param": None, "code": code}}
        return _json_response(payload, status=status, headers=headers)

    @staticmethod
    def _drop(request: web.Request) -> web.Response:
        """Close the connection without a response; the returned object is never sent."""
        transport = request.transport
        if transport is not None:
            transport.close()
        return web.Response(status=500)

    async def _inject(self, request: web.Request, api: str, rec: dict[str, Any], fault: _Fault) -> web.StreamResponse:
        kind = fault.kind
        if kind in _HTTP_FAULTS:
            status = _HTTP_FAULTS[kind]
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = _fmt_seconds(fault.retry_after)
                headers["retry-after-ms"] = _fmt_seconds(round(fault.retry_after * 1000.0, 3))
            message = fault.message or f"fakellm injected fault {kind}"
            self._finish(rec, kind, status)
            return self._error(api, status, message, headers)
        if kind == "malformed":
            self._finish(rec, kind, 200)
            text = fault.body if isinstance(fault.body, str) else "<html>fakellm: this is not JSON {"
            return web.Response(body=text.encode("utf-8"), status=200, content_type=fault.content_type)
        if kind == "disconnect":
            self._finish(rec, kind, None)
            return self._drop(request)
        if kind == "truncated":
            full = json.dumps(
                self._chat_body(0, rec["model"], 1, "truncated " * 20, None, "stop", 1, 1, 0)
                if api != _MESSAGES
                else self._messages_body(0, rec["model"], "truncated " * 20, None, "stop", 1, 1)
            ).encode("utf-8")
            head = (
                "HTTP/1.1 200 OK\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(full)}\r\n"
                "Connection: close\r\n\r\n"
            ).encode("ascii")
            self._finish(rec, kind, 200)
            transport = request.transport
            if transport is not None:
                transport.write(head + full[: len(full) // 2])
            return self._drop(request)
        if kind == "timeout":
            self._finish(rec, kind, None)
            assert self._wake is not None
            while not self._stopping:
                await self._wake.wait()
            return self._drop(request)
        raise AssertionError(kind)  # pragma: no cover

    # ---------------------------------------------------------------- bodies -----------

    @staticmethod
    def _chat_body(
        rid: int,
        model: str,
        n: int,
        reply: str,
        reasoning: str | None,
        finish: str,
        pt: int,
        ct: int,
        rt: int,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply}
        if reasoning:
            message["reasoning_content"] = reasoning
        choices = [
            {"index": i, "message": dict(message), "finish_reason": finish, "logprobs": None} for i in range(n)
        ]
        return {
            "id": f"chatcmpl-fake{rid}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": choices,
            "usage": {
                "prompt_tokens": pt,
                "completion_tokens": ct * n,
                "total_tokens": pt + ct * n,
                "completion_tokens_details": {"reasoning_tokens": rt * n},
            },
        }

    @staticmethod
    def _completions_body(
        script: _Script,
        rid: int,
        model: str,
        reply: str,
        finish: str,
        limit: int | None,
        body: Mapping[str, Any],
    ) -> dict[str, Any]:
        if limit is not None and limit <= 0:
            reply, finish = "", "length"
        echo = bool(body.get("echo"))
        want = body.get("logprobs")
        want_logprobs = want is not None and want is not False and script.logprobs_mode != "none"
        prompts = _completion_prompts(body) or [""]
        reply_tokens = pseudo_tokens(reply)
        choices, pt_total = [], 0
        for index, prompt in enumerate(prompts):
            prompt_tokens = pseudo_tokens(prompt)
            bos = [script.bos_token] if script.bos_token else []
            pt_total += len(bos) + len(prompt_tokens)
            logprobs: dict[str, Any] | None = None
            if want_logprobs:
                if echo and script.logprobs_mode == "echo":
                    tokens = bos + prompt_tokens + reply_tokens
                    values: list[float | None] = [script.token_logprob(t) for t in tokens]
                    # bos pseudo-token: not scored; first prompt token: null, as vLLM does
                    for j in range(len(bos) + (1 if prompt_tokens else 0)):
                        values[j] = None
                    offset = 0
                else:
                    tokens = list(reply_tokens)
                    values = [script.token_logprob(t) for t in tokens]
                    offset = len(prompt) if echo else 0
                offsets = []
                for tok in tokens:
                    offsets.append(offset)
                    offset += len(tok)
                logprobs = {
                    "tokens": tokens,
                    "token_logprobs": values,
                    "text_offset": offsets,
                    "top_logprobs": [None if v is None else {t: v} for t, v in zip(tokens, values)],
                }
            choices.append(
                {
                    "index": index,
                    "text": (prompt if echo else "") + reply,
                    "finish_reason": finish,
                    "logprobs": logprobs,
                }
            )
        ct = len(reply_tokens) * len(prompts)
        return {
            "id": f"cmpl-fake{rid}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": model,
            "choices": choices,
            "usage": {"prompt_tokens": pt_total, "completion_tokens": ct, "total_tokens": pt_total + ct},
        }

    @staticmethod
    def _responses_body(
        rid: int,
        model: str,
        reply: str,
        reasoning: str | None,
        finish: str,
        pt: int,
        ct: int,
        rt: int,
        body: Mapping[str, Any],
    ) -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        if reasoning:
            output.append(
                {"type": "reasoning", "id": f"rs_fake{rid}", "summary": [{"type": "summary_text", "text": reasoning}]}
            )
        output.append(
            {
                "type": "message",
                "id": f"msg_fake{rid}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply, "annotations": []}],
            }
        )
        incomplete = finish == "length"
        return {
            "id": f"resp_fake{rid}",
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "status": "incomplete" if incomplete else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "error": None,
            "instructions": body.get("instructions"),
            "metadata": {},
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "temperature": body.get("temperature"),
            "top_p": body.get("top_p"),
            "max_output_tokens": body.get("max_output_tokens"),
            "output": output,
            "usage": {
                "input_tokens": pt,
                "output_tokens": ct,
                "total_tokens": pt + ct,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": rt},
            },
        }

    @staticmethod
    def _messages_body(
        rid: int, model: str, reply: str, reasoning: str | None, finish: str, pt: int, ct: int
    ) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reasoning:
            content.append({"type": "thinking", "thinking": reasoning, "signature": "sig"})
        content.append({"type": "text", "text": reply})
        return {
            "id": f"msg_fake{rid}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": _STOP_REASONS.get(finish, finish),
            "stop_sequence": None,
            "usage": {"input_tokens": pt, "output_tokens": ct},
        }

    # ---------------------------------------------------------------- streaming --------

    @staticmethod
    async def _sse_start(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={"Cache-Control": "no-cache"})
        resp.content_type = "text/event-stream"
        await resp.prepare(request)
        return resp

    @staticmethod
    def _pieces(text: str, size: int = 64) -> list[str]:
        return [text[i : i + size] for i in range(0, len(text), size)] or [""]

    async def _stream_chat(
        self,
        request: web.Request,
        rid: int,
        model: str,
        n: int,
        reply: str,
        reasoning: str | None,
        finish: str,
        pt: int,
        ct: int,
        rt: int,
    ) -> web.StreamResponse:
        created = int(time.time())
        head = {"id": f"chatcmpl-fake{rid}", "object": "chat.completion.chunk", "created": created, "model": model}

        def chunk(index: int, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            obj = dict(head, choices=[{"index": index, "delta": delta, "finish_reason": finish_reason, "logprobs": None}])
            return b"data: " + json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n\n"

        out: list[bytes] = []
        for i in range(n):
            out.append(chunk(i, {"role": "assistant", "content": ""}))
            if reasoning:
                out.extend(chunk(i, {"reasoning_content": p}) for p in self._pieces(reasoning))
            out.extend(chunk(i, {"content": p}) for p in self._pieces(reply))
            out.append(chunk(i, {}, finish))
        usage = {
            "prompt_tokens": pt,
            "completion_tokens": ct * n,
            "total_tokens": pt + ct * n,
            "completion_tokens_details": {"reasoning_tokens": rt * n},
        }
        out.append(b"data: " + json.dumps(dict(head, choices=[], usage=usage)).encode("utf-8") + b"\n\n")
        out.append(b"data: [DONE]\n\n")
        resp = await self._sse_start(request)
        await resp.write(b"".join(out))
        await resp.write_eof()
        return resp

    async def _stream_messages(
        self,
        request: web.Request,
        rid: int,
        model: str,
        reply: str,
        reasoning: str | None,
        finish: str,
        pt: int,
        ct: int,
    ) -> web.StreamResponse:
        def event(name: str, data: dict[str, Any]) -> bytes:
            return f"event: {name}\ndata: ".encode("ascii") + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n\n"

        start = self._messages_body(rid, model, "", None, finish, pt, 1)
        start.update(content=[], stop_reason=None)
        out = [event("message_start", {"type": "message_start", "message": start})]
        index = 0
        if reasoning:
            out.append(
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                )
            )
            for p in self._pieces(reasoning):
                out.append(
                    event(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}},
                    )
                )
            out.append(
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": "sig"}},
                )
            )
            out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        out.append(
            event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
        )
        for p in self._pieces(reply):
            out.append(
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}},
                )
            )
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        out.append(
            event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": _STOP_REASONS.get(finish, finish), "stop_sequence": None},
                    "usage": {"output_tokens": ct},
                },
            )
        )
        out.append(event("message_stop", {"type": "message_stop"}))
        resp = await self._sse_start(request)
        await resp.write(b"".join(out))
        await resp.write_eof()
        return resp

    # ---------------------------------------------------------------- CLI -------------

    async def _serve_cli(self, host: str) -> None:
        self._loop = asyncio.get_running_loop()
        await self._astart(host)
        print(f"PORT {self._port}", flush=True)
        done = self._loop.create_future()

        def on_signal() -> None:
            if not done.done():
                done.set_result(None)

        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                self._loop.add_signal_handler(sig, on_signal)
            except (NotImplementedError, RuntimeError):  # pragma: no cover
                pass
        try:
            await done
        finally:
            await self._astop()


# --------------------------------------------------------------------------------------
# Child-process mode
# --------------------------------------------------------------------------------------


_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class SpawnedFakeLLM(_Addresses):
    """Handle on a fake server running in a child process (see :func:`spawn`)."""

    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc = proc
        self.port = port

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _call(self, method: str, path: str, payload: Any = None, timeout: float = 30) -> Any:
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with _NO_PROXY_OPENER.open(req, timeout=timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            raise RuntimeError(f"fakellm {method} {path} failed: {exc.code} {detail}") from None

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/_stats")

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._call("GET", "/_requests")

    def set_script(self, script: Mapping[str, Any] | str | os.PathLike[str] | None) -> None:
        self._call("POST", "/_script", load_script(script))

    def reset(self) -> None:
        self._call("POST", "/_reset", {})

    def release(self) -> None:
        self._call("POST", "/_release", {})

    def stop(self, timeout: float = 10) -> None:
        """Terminate the child and wait for it (kills it if it does not exit in time)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> "SpawnedFakeLLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def spawn(
    script: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    keep_bodies: bool = False,
    *,
    port: int = 0,
    startup_timeout: float = 30.0,
) -> SpawnedFakeLLM:
    """Start ``python -m theorembench.testing.fakellm`` in a child process.

    The script is written to a temporary JSON file for the child; the bound port
    is read from the child's first stdout line (``PORT <n>``).
    """
    raw = load_script(script)
    fd, path = tempfile.mkstemp(prefix="fakellm-script-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(raw, fh)
    cmd = [sys.executable, "-m", "theorembench.testing.fakellm", "--port", str(port), "--script", path]
    if not keep_bodies:
        cmd.append("--no-bodies")
    env = dict(os.environ)
    src_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc: subprocess.Popen[str] = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline() if proc.stdout else ""), daemon=True)
    reader.start()
    reader.join(startup_timeout)
    try:
        os.unlink(path)
    except OSError:  # pragma: no cover
        pass
    first = line[0].strip() if line else ""
    if not first.startswith("PORT "):
        proc.kill()
        proc.wait(timeout=10)
        raise RuntimeError(f"fakellm child did not report its port (got {first!r}, exit code {proc.returncode})")
    return SpawnedFakeLLM(proc, int(first.split()[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m theorembench.testing.fakellm", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", default=None, help="JSON script file")
    parser.add_argument("--no-bodies", action="store_true", help="do not keep request bodies in the log")
    args = parser.parse_args(argv)
    server = FakeLLMServer(args.script, port=args.port, keep_bodies=not args.no_bodies)
    asyncio.run(server._serve_cli(args.host))
    return 0


if __name__ == "__main__":
    sys.exit(main())
