"""JSON-schema structured output: find the JSON in a reply and validate it."""

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
