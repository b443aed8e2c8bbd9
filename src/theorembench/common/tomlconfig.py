"""Settings files as TOML text: the user's file overlaid with ``section.key`` command-line values, and the
documented file written from values and their one-line descriptions (see :mod:`theorembench.common.settings`)."""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

COMMENT_COLUMN = 33  # where a line's comment starts, unless the line is longer
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


class TomlReadError(ValueError):
    """The settings file could not be read or is not TOML (the message is one line)."""


def read_layers(path: str | Path | None, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The file at ``path`` (nothing when None), then each ``section.key`` (or top-level ``key``) override that is
    not None. An override whose section the file set to a plain value leaves it so (validation names it)."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TomlReadError(f"{path}: {first}") from None
    for dotted, value in overrides.items():
        if value is None:
            continue
        section, _, key = dotted.partition(".")
        if not key:
            data[section] = value
            continue
        table = data.setdefault(section, {})
        if isinstance(table, dict):
            table[key] = value
    return data


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_value(key)


def toml_value(value: Any) -> str:
    """One TOML value: text, number, boolean, list or inline table (None has no TOML form: a TypeError)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return ("-inf" if value < 0 else "inf") if math.isinf(value) else "nan" if math.isnan(value) else repr(value)
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 32 or ord(c) == 127 else c)
                             for c in value) + '"'  # fmt: skip
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}" if value else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def commented(line: str, comment: str | None) -> list[str]:
    """``line`` with ``comment`` at :data:`COMMENT_COLUMN`; a comment's further lines continue under the first."""
    if not comment:
        return [line]
    first, *rest = comment.splitlines()
    pad = max(COMMENT_COLUMN - len(line), 2)
    return [f"{line}{' ' * pad}# {first}".rstrip(), *(f"{' ' * COMMENT_COLUMN}# {more}".rstrip() for more in rest)]


def entry(key: str, value: Any, comment: str | None) -> list[str]:
    """``key = value  # comment``; an unset (None) value is shown as a comment, since TOML cannot write it."""
    if value is None:
        return commented(f"# {key} is unset", comment)
    return commented(f"{toml_key(key)} = {toml_value(value)}", comment)


def header(text: str) -> list[str]:
    return [f"# {line}".rstrip() for line in text.splitlines()]


def join_lines(blocks: Iterable[list[str]]) -> str:
    """Blocks of lines, a blank line between non-empty ones, ending with a newline."""
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


__all__ = ["TomlReadError", "commented", "entry", "header", "join_lines", "read_layers", "toml_key", "toml_value"]
