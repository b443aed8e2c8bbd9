"""One identity for every stored result: the pipeline name of a method's steps.

A stored step is reused only while everything that shaped it is unchanged. Every method builds
its pipeline name here, from four parts:

* the method's ``version``, an explicit string the method bumps when its output format changes;
* its **prompts**: the source of the modules that hold its prompt texts and the current values of
  their constants, so editing any prompt (in the file, or at run time)
  makes every step of the pipeline run again (the model calls whose request did not change are
  then served from the LLM cache, at no cost);
* its **code**: the source of the modules whose logic shapes the stored outputs;
* its **settings**: any JSON-serialisable value (a settings model's dump, model names, endpoints).

The digest covers files' bytes, not their modification times, so a fresh clone of the same
commit finds the steps an earlier clone stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from theorembench.common.digest import json_digest

DIGEST_LENGTH = 16


@cache
def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _plain(value: Any) -> bool:
    """Text or numbers, possibly in lists, tuples and dicts: what a prompt constant is made of."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def module_digest(module: ModuleType, *, constants: bool = False) -> str:
    """The module's source file and, with ``constants``, the current values of its plain constants (so a prompt
    changed at run time, say in a notebook, counts as an edit too)."""
    values = {k: v for k, v in vars(module).items() if constants and not k.startswith("__") and _plain(v)}
    return json_digest([_file_digest(module.__file__ or ""), values], 32)


Source = ModuleType | Path | str


def source_digest(modules: Iterable[Source], *, constants: bool = False) -> str:
    """A digest of the modules (see :func:`module_digest`); a path stands for its file's bytes (a module that
    cannot be imported here without a cycle), a string for itself (a text given inline)."""
    parts = []
    for m in modules:
        if isinstance(m, str):
            parts.append(("text", hashlib.sha256(m.encode()).hexdigest()))
        elif isinstance(m, Path):
            parts.append((m.name, _file_digest(str(m))))
        else:
            parts.append((m.__name__, module_digest(m, constants=constants)))
    return json_digest(sorted(parts), 32)


def package_modules(package: ModuleType) -> list[ModuleType]:
    """Every module of a package, imported (the code part of a method's identity)."""
    import importlib
    import pkgutil

    found = [package]
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        found.append(importlib.import_module(info.name))
    return found


def identity(*, version: str, prompts: Iterable[Source], settings: Any,
             code: Iterable[Source] = ()) -> str:  # fmt: skip
    """The digest of the four parts (see the module's docstring)."""
    return json_digest({"version": version, "prompts": source_digest(prompts, constants=True),
                        "code": source_digest(code),
                        "settings": settings}, DIGEST_LENGTH, ascii_only=True)  # fmt: skip


def pipeline_name(method: str, *, version: str, prompts: Iterable[Source], settings: Any,
                  code: Iterable[Source] = (), scope: str | None = None) -> str:  # fmt: skip
    """``<method>[/<scope>]/<identity>``: the name under which a pipeline's steps are stored."""
    digest = identity(version=version, prompts=prompts, settings=settings, code=code)
    return "/".join(part for part in (method, scope, digest) if part)


__all__ = ["identity", "module_digest", "package_modules", "pipeline_name", "source_digest"]
