"""Settings files: a documented default TOML, overlaid by the user's file and by command-line values."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def load_layered(default_toml: str, model: type[M], path: str | Path | None, overrides: dict[str, Any],
                 error: type[Exception]) -> M:  # fmt: skip
    """Defaults, then the file at ``path`` (section by section), then ``section.key`` overrides (None = unset)."""
    data: dict[str, Any] = tomllib.loads(default_toml)
    if path is not None:
        try:
            user = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise error(f"{path}: {exc}") from None
        for section, values in user.items():
            if isinstance(values, dict) and isinstance(data.get(section), dict):
                data[section].update(values)
            else:
                data[section] = values
    for dotted, value in overrides.items():
        if value is None:
            continue
        section, _, key = dotted.partition(".")
        data.setdefault(section, {})[key] = value
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise error(f"{path or 'config'}: {where}: {err['msg']}") from None
