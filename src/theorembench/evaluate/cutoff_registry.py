"""The registry of known models' release dates and training-data cutoffs, for the contamination guard.

The built-in table (``data/model_cutoffs.toml``) lists well-known models with the dates their providers
publish and where; a user's file in the same format (``$THEOREMBENCH_MODELS_FILE``, or a command's
``--models-file``) adds entries or replaces built-in ones of the same key. A date stated only as a month is
read as the month's last day: a later cutoff counts fewer items as new, so a vague date never lets a
possibly seen item through. An entry without a stated cutoff falls back to its release date, for the same
reason (no training data can postdate the release).
"""

from __future__ import annotations

import calendar
import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting, UserError

MODELS_FILE_ENV = "THEOREMBENCH_MODELS_FILE"
BUILTIN = "built-in model_cutoffs.toml"
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def parse_when(text: Any, where: str) -> date:
    """``YYYY-MM-DD`` as that day, ``YYYY-MM`` as the month's last day (the conservative reading)."""
    if isinstance(text, date):
        return text
    value = str(text).strip()
    try:
        if m := _DAY.match(value):
            return date(int(m[1]), int(m[2]), int(m[3]))
        if m := _MONTH.match(value):
            year, month = int(m[1]), int(m[2])
            return date(year, month, calendar.monthrange(year, month)[1])
    except ValueError:
        pass
    raise InvalidSetting("models_file", f"{where}: {value!r} is not a date (YYYY-MM-DD or YYYY-MM)")


@dataclass(frozen=True)
class ModelEntry:
    """One known model: the names it goes by, its release, its stated cutoff (None: none stated), the source."""

    key: str
    patterns: tuple[str, ...]
    released: date | None
    cutoff: date | None
    stated: dict[str, str]  # the dates as the file gives them ("2024-04": a month)
    source: str
    origin: str  # the file the entry came from

    @property
    def effective_cutoff(self) -> tuple[date | None, str]:
        """The date the guard compares with, and on what it rests: the stated cutoff, else the release date."""
        if self.cutoff is not None:
            return self.cutoff, "stated cutoff"
        if self.released is not None:
            return self.released, "release date (no cutoff stated)"
        return None, "unknown"


def _entry(key: str, raw: Any, origin: str) -> ModelEntry:
    where = f"{origin}: model {key!r}"
    if not isinstance(raw, dict):
        raise InvalidSetting("models_file", f"{where} must be a table")
    patterns = raw.get("patterns")
    if isinstance(patterns, str):
        patterns = [patterns]
    if not patterns or not all(isinstance(p, str) and p for p in patterns):
        raise InvalidSetting("models_file", f"{where} needs 'patterns', a list of model names")
    if not raw.get("source"):
        raise InvalidSetting("models_file", f"{where} needs 'source': where its dates are published")
    if raw.get("cutoff") is None and raw.get("released") is None:
        raise InvalidSetting("models_file", f"{where} needs a 'cutoff' or a 'released' date")
    released = parse_when(raw["released"], f"{where} released") if raw.get("released") is not None else None
    cutoff = parse_when(raw["cutoff"], f"{where} cutoff") if raw.get("cutoff") is not None else None
    stated = {k: str(raw[k]) for k in ("released", "cutoff") if raw.get(k) is not None}
    return ModelEntry(key, tuple(p.lower() for p in patterns), released, cutoff, stated, str(raw["source"]), origin)


def _parse(text: str, origin: str) -> dict[str, ModelEntry]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidSetting("models_file", f"{origin}: not valid TOML: {exc}") from None
    table = data.get("models", {})
    if not isinstance(table, dict):
        raise InvalidSetting("models_file", f"{origin}: [models] must be a table")
    return {key: _entry(key, raw, origin) for key, raw in table.items()}


class Registry:
    """The built-in entries overlaid with the user's; :meth:`lookup` finds a model's entry by its name."""

    def __init__(self, entries: dict[str, ModelEntry], sources: list[str]):
        self.entries, self.sources = entries, sources

    @classmethod
    def load(cls, models_file: str | Path | None = None) -> Registry:
        """The built-in table, then ``$THEOREMBENCH_MODELS_FILE``, then ``models_file``: later files win."""
        text = resources.files("theorembench.data").joinpath("model_cutoffs.toml").read_text(encoding="utf-8")
        entries, sources = _parse(text, BUILTIN), [BUILTIN]
        env = os.environ.get(MODELS_FILE_ENV)
        for path, setting in ((Path(env).expanduser() if env else None, MODELS_FILE_ENV),
                              (Path(models_file) if models_file else None, "models_file")):  # fmt: skip
            if path is None:
                continue
            try:
                user = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                problem = f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}"
                if setting == MODELS_FILE_ENV:
                    raise UserError(f"${MODELS_FILE_ENV}: {problem}") from None
                raise InvalidSetting(setting, problem) from None
            entries.update(_parse(user, str(path)))
            sources.append(str(path))
        return cls(entries, sources)

    def lookup(self, model: str) -> ModelEntry | None:
        """The entry naming ``model``: an exact pattern beats a wildcard, a longer wildcard a shorter one, and an
        entry of a later file (the user's) an earlier one."""
        name = model.lower()
        rank = {origin: i for i, origin in enumerate(self.sources)}
        best: tuple[tuple[int, int, int], ModelEntry] | None = None
        for entry in self.entries.values():
            for pattern in entry.patterns:
                exact = pattern == name
                if exact or (any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(name, pattern)):
                    score = (int(exact), len(pattern), rank.get(entry.origin, 0))
                    if best is None or score > best[0]:
                        best = (score, entry)
        return best[1] if best else None


__all__ = ["BUILTIN", "MODELS_FILE_ENV", "ModelEntry", "Registry", "parse_when"]
