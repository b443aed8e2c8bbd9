"""JSON-schema structured output: ask for it (with repair turns), find the JSON in a reply and validate it."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema


class StructuredOutputError(ValueError):
    def __init__(self, message: str, *, raw: str = "", call_ids: list[int] | None = None):
        super().__init__(message)
        self.raw = raw
        self.call_ids = call_ids or []


_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON value in a reply: the whole reply, a fenced block, or the first balanced value."""
    stripped = text.strip()
    candidates = [stripped]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for start_char in "{[":
        start = stripped.find(start_char)
        if start >= 0:
            candidates.append(stripped[start:])
    # strict=False: small local models put raw line breaks inside strings
    decoder = json.JSONDecoder(strict=False)
    for candidate in candidates:
        if not candidate:
            continue
        try:
            value, _end = decoder.raw_decode(candidate)
            return value
        except json.JSONDecodeError:
            continue
    raise StructuredOutputError("the reply contains no JSON value", raw=text)


def parse_and_validate(text: str, schema: dict[str, Any]) -> Any:
    value = extract_json(text)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(top level)"
        raise StructuredOutputError(f"JSON does not match the schema at {where}: {first.message}", raw=text)
    return value


def llama_cpp_schema(schema: Any, *, max_string: int = 600) -> Any:
    """A schema llama.cpp's grammar converter enforces fully (for constrained decoding only).

    Its converter reads tuple arrays as ``items: [...]`` (not ``prefixItems``), ignores
    ``minimum``/``maximum`` (a small integer range becomes an ``enum``), and lets a small
    model ramble inside strings until the token limit (strings get a ``maxLength``).
    Replies are still validated against the original schema.
    """
    if isinstance(schema, list):
        return [llama_cpp_schema(s, max_string=max_string) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: llama_cpp_schema(v, max_string=max_string) for k, v in schema.items()}
    if "prefixItems" in out:
        out["items"] = out.pop("prefixItems")
    if out.get("type") == "integer" and "minimum" in out and "maximum" in out and "enum" not in out:
        low, high = int(out["minimum"]), int(out["maximum"])
        if high - low <= 32:
            out.pop("minimum"), out.pop("maximum")
            out["enum"] = list(range(low, high + 1))
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out["maxLength"] = min(int(out.get("maxLength", max_string)), max_string)
    return out


async def ask_for_json(llm: Any, model: Any, messages: list[dict[str, str]], schema: dict[str, Any],
                       settings: Any = None, *, purpose: str = "generate_json", sample: int = 0,
                       repair_attempts: int = 2) -> tuple[Any, list[Any]]:  # fmt: skip
    """``LLM.generate_json``: the validated object and every completion, or a :class:`StructuredOutputError`.

    Every reply that fails validation is marked invalid in the store (it keeps its tokens and
    cost in the usage ledger) so the response cache never serves it again: a rerun of a
    failed step asks the model anew. A repair turn quotes the invalid reply, so it is a
    different call; an invalid repair reply is marked too.
    """
    completions: list[Any] = []
    convo = list(messages)
    last_error = ""
    for repair in range(repair_attempts + 1):
        completion = await llm.generate(
            model, convo, settings, purpose=purpose if repair == 0 else f"{purpose}.repair",
            sample=sample, schema=schema,
        )  # fmt: skip
        completions.append(completion)
        try:
            return parse_and_validate(completion.text, schema), completions
        except StructuredOutputError as exc:
            last_error = str(exc)
            llm.store.mark_call_invalid(completion.call_id, last_error)
            convo = [*convo, {"role": "assistant", "content": completion.text},
                     {"role": "user", "content": repair_prompt(last_error)}]  # fmt: skip
    raise StructuredOutputError(
        f"no valid JSON after {repair_attempts} repair attempts: {last_error}",
        raw=completions[-1].text if completions else "",
        call_ids=[c.call_id for c in completions],
    )


def repair_prompt(error: str) -> str:
    return (
        "Your previous reply could not be used: "
        f"{error}\nReply again with only the corrected JSON value, no commentary and no code fence."
    )
