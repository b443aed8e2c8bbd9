"""The one shape of every method's settings: a pydantic model whose field defaults are the only copy of each
default value.

* The documented settings file (``theorembench <method> config``) is written from the model: each field's
  value and its ``description`` as the comment (:meth:`Settings.to_toml`), tables for :class:`Section` fields.
* :meth:`Settings.load` reads a user's file over those defaults, then ``section.key`` command-line values.
* :meth:`Settings.check` tests the constraints between settings (:meth:`Settings.problems`).
* :meth:`Settings.digest` is a short hash of some sections or all.

Every failure is a :class:`SettingsError` with one line that names the setting to fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from theorembench.common.digest import json_digest
from theorembench.common.errors import UserError
from theorembench.common.tomlconfig import TomlReadError, commented, entry, header, join_lines, read_layers


class SettingsError(UserError, ValueError):
    """A setting to fix, in one line: where it comes from, its ``section.key`` and what is wrong."""


def validation_line(exc: ValidationError, source: str) -> str:
    """The first problem of a validation error in one line: ``<source>: <section.key>: <why> (got <value>)``."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "settings"
    given = f" (got {err['input']!r})" if err["loc"] and err["type"] != "missing" else ""
    why = " ".join(str(err["msg"]).split())
    return f"{source}: {where}: {why}{given}"


class Section(BaseModel):
    """A ``[table]`` of a settings file: unknown keys are errors; each field's ``description`` is its comment."""

    model_config = ConfigDict(extra="forbid")


class Settings(BaseModel):
    """A method's settings: top-level fields are plain keys or :class:`Section` tables."""

    model_config = ConfigDict(extra="forbid")
    TOML_HEADER: ClassVar[str] = ""  # the comment that opens the documented file

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> Self:
        """The defaults, then the file at ``path`` (section by section), then ``section.key`` overrides (None:
        not given). Validation only: call :meth:`check` for the constraints between settings."""
        try:
            data = read_layers(path, overrides)
        except TomlReadError as exc:
            raise SettingsError(str(exc)) from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise SettingsError(validation_line(exc, str(path) if path is not None else "settings")) from None

    def problems(self) -> list[str]:
        """Broken constraints between settings, each naming its ``section.key`` (none here; methods add theirs)."""
        return []

    def check(self) -> Self:
        """These settings, or a :class:`SettingsError` listing every problem on one line."""
        found = self.problems()
        if found:
            raise SettingsError("; ".join(found))
        return self

    def digest(self, *sections: str) -> str:
        """A short hash of the named sections (all when none given)."""
        data = self.model_dump(mode="json")
        if sections:
            unknown = [s for s in sections if s not in data]
            if unknown:
                raise KeyError(f"no settings section {', '.join(unknown)} in {type(self).__name__}")
            data = {s: data[s] for s in sections}
        return json_digest(data, 12, ascii_only=True)

    def to_toml(self) -> str:
        """These values as the documented settings file (comments from the fields' descriptions)."""
        fields = type(self).model_fields
        plain: list[str] = []
        tables: list[list[str]] = []
        for name, field in fields.items():
            value = getattr(self, name)
            if isinstance(value, BaseModel):
                lines = commented(f"[{name}]", field.description)
                for key, sub in type(value).model_fields.items():
                    lines += entry(key, getattr(value, key), sub.description)
                tables.append(lines)
            else:
                plain += entry(name, value, field.description)
        return join_lines([header(self.TOML_HEADER), plain, *tables])

    @classmethod
    def default_toml(cls) -> str:
        """The documented settings file with every default."""
        return cls().to_toml()


__all__ = ["Section", "Settings", "SettingsError", "validation_line"]
