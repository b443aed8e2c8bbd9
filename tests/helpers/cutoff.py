"""The contamination guard's test inputs: MCQ items named by arXiv ids of chosen months, and a models file that
gives the fake model a cutoff between them."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

FAKE_MODEL = "openai-api/fake/m1"


def demo_items() -> list[dict]:
    return json.loads(resources.files("theorembench.data").joinpath("demo_mcq.json").read_text(encoding="utf-8"))


def mcq_file(path: Path, ids: list[str]) -> Path:
    """The demo's first items, renamed to ``ids`` (arXiv ids: each names the month its paper was first submitted)."""
    items = demo_items()[: len(ids)]
    for item, new_id in zip(items, ids, strict=True):
        item["id"] = new_id
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def models_file(path: Path, pattern: str = FAKE_MODEL, cutoff: str = "2024-06", key: str = "fake-m1",
                source: str = "https://example.org/fake-model-card") -> Path:  # fmt: skip
    path.write_text(f'[models.{key}]\npatterns = ["{pattern}"]\nreleased = "2024-09-01"\ncutoff = "{cutoff}"\n'
                    f'source = "{source}"\n', encoding="utf-8")  # fmt: skip
    return path


def eternal_instance(iid: str, paper_id: str | None) -> dict:
    """One EternalMath instance line, written by hand, from the paper ``paper_id`` (an arXiv id, or None)."""
    return {"template_id": "t_cut", "instance_id": f"t_cut#{iid}", "problem": f"PROBLEM-{iid}: compute the value.",
            "solution_steps": "The value is 12.", "numerical_value": "12", "exact_expression": "",
            "params_used": {"n": 3}, "answer_kind": "integer", "msc": ["05"], "paper_id": paper_id, "theorem": None,
            "template_version": 1, "code_hash": "0" * 64, "seed": 1,
            "execution": {"status": "ok", "isolation": [], "wall_s": 0.01, "cpu_s": 0.01}, "libraries": {}}  # fmt: skip


def hybrid_folder(folder: Path, origins: dict[str, list[str]]) -> Path:
    """A `hybrid build` output by hand: per question id, the origins of its three items (2 of 3 correct)."""
    folder.mkdir(parents=True, exist_ok=True)
    questions = [{"id": qid, "m": 2, "n": 3, "answer": [1, 2],
                  "items": [{"text": f"Statement {k} of {qid}.", "correct": k < 2, "origin": origin}
                            for k, origin in enumerate(found)]}
                 for qid, found in origins.items()]  # fmt: skip
    (folder / "questions.json").write_text(json.dumps(questions), encoding="utf-8")
    (folder / "ppl_questions.json").write_text("[]", encoding="utf-8")
    return folder
