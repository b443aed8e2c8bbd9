"""Human audit: a blind random sample for experts, and the precision their verdicts give.

The sample shows each instance's problem, verified answer and solution steps under an
opaque audit id (A001, A002, ...), with empty ``verdict`` and ``comment`` columns; no
model answer, tier, template or paper is shown. The id-to-instance key is written beside
it (``<name>.key.json``) for whoever runs the audit. Importing the experts' file gives the
precision (valid / judged) with its Wilson 95% interval; rows left blank are not judged.
"""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.inputs import read_rows
from theorembench.common.outputs import write_json, write_text
from theorembench.common.stats import proportion
from theorembench.methods.eternal.answering import expected_of, load_instances

FIELDS = ("audit_id", "problem", "answer", "solution_steps", "verdict", "comment")
VERDICTS = ("valid", "invalid")


def key_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(f"{path.stem}.key.json")


def audit_sample(instances_path: str | Path, out: str | Path, *, n: int = 100, seed: int = 0) -> dict[str, Any]:
    """Write a blind sample of ``n`` instances (all of them when fewer) to ``out`` (.csv or .json) and its key."""
    out = Path(out)
    if n < 1:
        raise InvalidSetting("n", "must be at least 1")
    if out.suffix.lower() not in (".csv", ".json"):
        raise UserError(f"{out}: write the sample to a .csv or .json file")
    instances = load_instances(instances_path)
    chosen = random.Random(seed).sample(instances, min(n, len(instances)))
    width = max(3, len(str(len(chosen))))
    rows, key = [], {}
    for number, inst in enumerate(chosen, start=1):
        audit_id = f"A{number:0{width}d}"
        value = expected_of(inst)[0]
        exact = str(inst.get("exact_expression") or "").strip()
        answer = value if not exact or exact == value else f"{value}  (= {exact})"
        rows.append({"audit_id": audit_id, "problem": inst["problem"], "answer": answer,
                     "solution_steps": inst.get("solution_steps") or "", "verdict": "", "comment": ""})  # fmt: skip
        key[audit_id] = inst["instance_id"]
    if out.suffix.lower() == ".json":
        write_json(out, rows)
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        write_text(out, buffer.getvalue())
    write_json(key_path(out), {"file": str(instances_path), "seed": seed, "requested": n, "key": key})
    return {"sample": out, "key": key_path(out), "n": len(rows), "requested": n, "available": len(instances)}


def audit_import(path: str | Path, *, key: str | Path | None = None) -> dict[str, Any]:
    """Precision from experts' verdicts (valid / invalid per audit id), with its Wilson interval.

    The key (default ``<name>.key.json`` beside the file, when there) checks the ids and names
    the instances judged invalid. Any bad row (unknown id or verdict, an id twice) stops the
    import with one line per row.
    """
    path = Path(path)
    key_file = Path(key) if key else key_path(path)
    known: dict[str, str] | None = None
    if key or key_file.is_file():
        try:
            known = json.loads(key_file.read_text(encoding="utf-8"))["key"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{key_file}: not an audit key ({exc})") from None
    problems: list[str] = []
    verdicts: dict[str, str] = {}
    for where, row in read_rows(path, ("audit_id", "verdict")):
        audit_id = str(row.get("audit_id") or "").strip()
        verdict = str(row.get("verdict") or "").strip().lower()
        if not audit_id or (known is not None and audit_id not in known):
            problems.append(f"{where}: unknown audit id {audit_id!r}")
        elif audit_id in verdicts:
            problems.append(f"{where}: audit id {audit_id!r} appears twice")
        elif verdict and verdict not in VERDICTS:
            problems.append(f"{where}: verdict {row.get('verdict')!r} is not valid or invalid")
        else:
            verdicts[audit_id] = verdict
    if problems:
        raise UserError("\n".join(problems))
    judged = {a: v for a, v in verdicts.items() if v}
    valid = sum(v == "valid" for v in judged.values())
    est = proportion(valid, len(judged))
    out = {"judged": len(judged), "valid": valid, "invalid": len(judged) - valid,
           "unjudged": len(verdicts) - len(judged) + (len(known) - len(verdicts) if known is not None else 0),
           "precision": est.to_dict(),
           "shown": est.percent()}  # fmt: skip
    if known is not None:
        out["invalid_instances"] = sorted(known[a] for a, v in judged.items() if v == "invalid")
    return out


__all__ = ["FIELDS", "VERDICTS", "audit_import", "audit_sample", "key_path"]
