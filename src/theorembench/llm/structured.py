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
    decoder = json.JSONDecoder()
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
