"""Scripted rules: script loading and validation, rule matching, reply sequences, faults, latency and log-prob rules."""

from __future__ import annotations

import json
import os
import random
import re
from typing import Any, Mapping

from theorembench.testing.fakellm.tool_calls import Reply, parse_reply

#: Fault kinds understood in ``faults[].kind`` and ``fault_kind``.
FAULT_KINDS = frozenset(
    {"429", "500", "503", "529", "400", "401", "timeout", "truncated", "malformed", "disconnect", "empty"}
)

_DEFAULT_REPLY = "\\boxed{A}"
_DEFAULT_MODELS = ["fake-model"]


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
     "logprob_rules", "logprob_default", "bos_token", "logprobs_mode", "barrier", "batch_hold"}
)  # fmt: skip
_LOGPROB_RULE_KEYS = frozenset({"match", "logprob"})
_LOGPROBS_MODES = ("echo", "generated", "none")


def _check_keys(what: str, spec: Mapping[str, Any], allowed: frozenset[str]) -> None:
    if not isinstance(spec, Mapping):
        raise ValueError(f"{what} must be a JSON object, got {type(spec).__name__}")
    unknown = set(spec) - allowed
    if unknown:
        raise ValueError(f"unknown {what} keys {sorted(unknown)}; allowed: {sorted(allowed)}")


class Fault:
    """One scripted fault: a ``faults`` entry or a ``fault_kind`` of random faults."""

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


class Rule:
    """One compiled rule (or the default): what it matches, its replies, delay, faults, usage and hit counters."""

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
        items = reply if isinstance(reply, list) else [reply]
        self.replies: list[Reply] = [parse_reply(r, f"rule {label} reply {i}") for i, r in enumerate(items)]
        if not self.replies:
            self.replies = [Reply("")]
        reasoning = spec.get("reasoning")
        if reasoning is None:
            self.reasonings: list[str] | None = None
        else:
            self.reasonings = [str(r) for r in reasoning] if isinstance(reasoning, list) else [str(reasoning)]
        self.delay_ms = float(spec.get("delay_ms") or 0)
        self.faults = [Fault(f) for f in spec.get("faults") or []]
        self.usage = dict(spec.get("usage") or {})
        self.finish_reason = spec.get("finish_reason")
        self.echo = False  # set on the default rule by the script's ``echo`` flag
        self.hits = 0  # every request that matched this rule
        self.answered = 0  # matched requests that were not faulted (indexes reply sequences)

    def matches(self, text: str, model: str) -> bool:
        if self.model is not None and self.model != model:
            return False
        return self.pattern is None or self.pattern.search(text) is not None

    def fault_for(self, hit: int) -> Fault | None:
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


class Script:
    """A compiled script: rules, random faults, the ``max_responses`` budget, the barrier, models and log-prob rules."""

    def __init__(self, raw: Mapping[str, Any] | None):
        raw = dict(raw or {})
        _check_keys("script", raw, _SCRIPT_KEYS)
        self.raw = raw
        self.echo = bool(raw.get("echo", False))
        default_spec = dict(raw.get("default") or {})
        self.default = Rule("default", default_spec, is_default=True)
        # ``echo`` replaces the default reply with the last user message.
        self.default.echo = self.echo
        self.rules = [Rule(str(i), spec) for i, spec in enumerate(raw.get("rules") or [])]
        self.fault_rate = float(raw.get("fault_rate") or 0.0)
        fk = raw.get("fault_kind", "500")
        self.fault_kinds = [Fault({"kind": k, "times": 1}) for k in (fk if isinstance(fk, list) else [fk])]
        self.rng = random.Random(raw.get("seed", 0))
        mr = raw.get("max_responses")
        self.max_responses = int(mr) if mr is not None else None
        self.admitted = 0  # requests admitted for an ok answer under this script (max_responses budget)
        barrier = raw.get("barrier")
        self.barrier = int(barrier) if barrier is not None else 0
        if self.barrier < 0:
            raise ValueError(f"barrier must be a count of requests >= 0, got {barrier!r}")
        self.barrier_waiting = 0  # requests held at the barrier now
        self.barrier_gen = 0  # batches let through so far
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

    def match(self, text: str, model: str) -> Rule:
        for rule in self.rules:
            if rule.matches(text, model):
                return rule
        return self.default

    def random_fault(self) -> Fault | None:
        if self.fault_rate <= 0:
            return None
        if self.rng.random() < self.fault_rate:
            return self.fault_kinds[0] if len(self.fault_kinds) == 1 else self.rng.choice(self.fault_kinds)
        return None
