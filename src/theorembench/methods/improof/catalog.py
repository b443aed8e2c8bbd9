"""The problem catalogue in the store: import and export files, versions, status changes.

Importing is all or nothing: a file with any bad field stores nothing, and a file whose
problems are all valid is written in one transaction. A problem already in the store gets a
new version only when its content changed; a status written in the file that differs from the
stored one is applied as a status change, which must be an allowed move (a file without a
status leaves it alone). Status changes never create versions.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from theorembench.common.errors import UserError
from theorembench.methods.improof.problems import (
    STATUSES,
    TRANSITIONS,
    Problem,
    ProblemFileError,
    allowed,
    parse_problems,
)
from theorembench.store.base import dumps
from theorembench.store.db import Store
from theorembench.store.improof import Conflict, ImproofRepo

FORMATS = ("yaml", "json")


def read_problem_file(path: str | Path) -> list[Problem]:
    """The problems of a JSON (``.json``) or YAML file, checked; :class:`ProblemFileError` lists every bad field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except ValueError as exc:
        raise ProblemFileError([f"{path.name}: not JSON: {exc}"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise ProblemFileError([f"{path.name}: not YAML{at}: {getattr(exc, 'problem', None) or exc}"]) from None
    return parse_problems(data, path.name)


def _from_version(found: dict[str, Any], version: dict[str, Any]) -> Problem:
    """``updated_at``: the problem's last change for its current version, the version's creation for older ones."""
    current = version["version"] == found["current_version"]
    updated_at = found["updated_at"] if current else version["created_at"]
    return Problem(id=found["id"], status=found["status"], version=version["version"], updated_at=updated_at,
                   **version["payload"])  # fmt: skip


def get_problem(store: Store, problem_id: str, version: int | None = None) -> Problem:
    """A problem at ``version`` (default: current), with its status, ``version`` and ``updated_at``."""
    repo = ImproofRepo(store)
    found = repo.problem(problem_id)
    if found is None:
        raise UserError(f"no problem {problem_id!r} in the store (theorembench improof list)")
    row = repo.version(problem_id, version)
    if row is None:
        raise UserError(f"problem {problem_id} has no version {version} (current: {found['current_version']})")
    return _from_version(found, row)


def list_problems(store: Store, status: str | None = None) -> list[dict[str, Any]]:
    """One summary per problem: id, title, status, author, version, tags, subquestions, points, updated_at."""
    if status is not None and status not in STATUSES:
        raise UserError(f"unknown status {status!r}: use one of {', '.join(STATUSES)}")
    out = []
    for row in ImproofRepo(store).problems(status):
        payload = row["payload"]
        subs = payload.get("subquestions", [])
        out.append({"id": row["id"], "title": payload.get("title"), "status": row["status"], "author": row["author"],
                    "version": row["current_version"], "tags": payload.get("tags", []), "subquestions": len(subs),
                    "points": sum(s.get("points", 1) for s in subs), "updated_at": row["updated_at"]})  # fmt: skip
    return out


def save_version(store: Store, problem: Problem, actor: str | None, note: str = "") -> int:
    """Store ``problem``'s content; returns its version number.

    A new problem starts at version 1 with ``problem.status``; an existing one gets version k+1
    when its content differs from version k, else keeps k. The status is not touched here
    (use :func:`set_status`).
    """
    repo = ImproofRepo(store)
    content = problem.content()
    with store.transaction():
        found = repo.problem(problem.id)
        if found is None:
            repo.create_problem(problem.id, status=problem.status, author=problem.author, payload=content,
                                actor=actor, note=note)  # fmt: skip
            return 1
        current = repo.version(problem.id)
        if current is not None and dumps(current["payload"]) == dumps(content):
            return int(found["current_version"])
        return repo.add_version(problem.id, content, author=problem.author, actor=actor, note=note)


def set_status(store: Store, problem_id: str, to: str, actor: str | None, note: str = "") -> dict[str, Any]:
    """Move a problem to status ``to`` if the workflow allows it; returns ``{id, from, to}``."""
    if to not in STATUSES:
        raise UserError(f"unknown status {to!r}: use one of {', '.join(STATUSES)}")
    found = ImproofRepo(store).problem(problem_id)
    if found is None:
        raise UserError(f"no problem {problem_id!r} in the store (theorembench improof list)")
    old = found["status"]
    if not allowed(old, to):
        moves = ", ".join(TRANSITIONS[old]) or "none"
        raise UserError(f"problem {problem_id}: cannot move from {old} to {to} (allowed from {old}: {moves})")
    try:
        ImproofRepo(store).set_status(problem_id, old, to, actor=actor, note=note)
    except Conflict as exc:
        raise UserError(f"{exc}: someone changed it meanwhile; look again and retry") from None
    return {"id": problem_id, "from": old, "to": to}


def _moves(found: dict[str, Any], problem: Problem) -> bool:
    """Whether importing ``problem`` changes the stored status: only a status written in the file does."""
    return problem.status_in_file and found["status"] != problem.status


def import_problems(store: Store, path: str | Path, actor: str | None = None) -> list[str]:
    """Import every problem of a file, all or nothing; returns their ids in file order."""
    name = Path(path).name
    problems = read_problem_file(path)
    repo = ImproofRepo(store)
    moves: list[str] = []
    for n, problem in enumerate(problems, start=1):
        found = repo.problem(problem.id)
        if found and _moves(found, problem) and not allowed(found["status"], problem.status):
            moves.append(f"{name}: problem {n} ({problem.id}): status: cannot move from {found['status']} "
                         f"(in the store) to {problem.status}")  # fmt: skip
    if moves:
        raise ProblemFileError(moves)
    note = f"imported from {name}"
    try:
        with store.transaction():
            for problem in problems:
                found = repo.problem(problem.id)
                save_version(store, problem, actor, note)
                if found and _moves(found, problem):
                    repo.set_status(problem.id, found["status"], problem.status, actor=actor, note=note)
    except Conflict as exc:
        raise UserError(f"{name}: {exc}: someone changed the store meanwhile; nothing was imported, retry") from None
    return [p.id for p in problems]


def demo_problem_files() -> list[Path]:
    """The demo problems shipped with the package (``theorembench/data/improof/*.yaml``)."""
    folder = resources.files("theorembench.data").joinpath("improof")
    return sorted(Path(str(f)) for f in folder.iterdir() if f.name.endswith(".yaml"))


def import_demo_problems(store: Store, actor: str | None = "demo") -> list[str]:
    """Import the shipped demo problems; returns their ids."""
    return [pid for path in demo_problem_files() for pid in import_problems(store, path, actor)]


def _literal_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(str, _literal_str)


def export_problems(store: Store, ids: list[str] | None = None, fmt: str = "yaml") -> str:
    """The problems (all, or those named, in that order) as a YAML or JSON list, with version and updated_at."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}: use yaml or json")
    chosen = ids if ids else [row["id"] for row in list_problems(store)]
    data = [get_problem(store, pid).export() for pid in chosen]
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
