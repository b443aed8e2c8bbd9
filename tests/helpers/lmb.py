"""The scripted `theorembench lmb build`: replies routed by each stage's system prompt, the sample papers, the
config file, the command and what it stored (shared by the LMB build, stage-input and LaTeX-check tests)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.store import Store

runner = CliRunner()
GEN, JUDGE, CAL = "openai-api/fake/gen", "openai-api/fake/judge", "openai-api/fake/cal"

A_TEXT = "For every integer $n \\ge 1$ one has $|D_n - n!/e| < 1/(n+1)$ and the sign of $D_n - n!/e$ is $(-1)^n$."
STEM = {"question": "Let $D_n$ be the number of permutations of $\\{1,\\dots,n\\}$ without fixed points. "
                    "What is the sharpest statement about the distance between $D_n$ and $n!/e$?",
        "correct_choice": {"label": "A", "text": A_TEXT}}  # fmt: skip


def distractors(marker: str = "", b_text: str | None = None, broken: str | None = None) -> str:
    texts = {
        "B": b_text or f"For every integer $n \\ge 1$ one has $|D_n - n!/e| < 1/(n+2)$ and the sign of $D_n - n!/e$ is $(-1)^n${marker}.",
        "C": "For every integer $n \\ge 1$ one has $|D_n - n!/e| < 1$ and $D_n$ is the integer nearest $n!/e$.",
        "D": "For every integer $n \\ge 1$ one has $|D_n - n!/e| < 1/(n+1)$ and the sign of $D_n - n!/e$ is $(-1)^{n+1}$.",
        "E": broken or "For every integer $n \\ge 2$ one has $|D_n - n!/e| < 1/n^2$ and the sign of $D_n - n!/e$ is $(-1)^n$.",
    }  # fmt: skip
    usage = [{"label": lab, "sketch_hook_type": "counting_estimate", "tampered_component": f"part {lab}",
              "template_used": t} for lab, t in zip("BCDE", ["boundary_range", "weaker_true", "stronger_trap", "wildcard"])]  # fmt: skip
    return json.dumps({"choices": [{"label": k, "text": v} for k, v in texts.items()],
                       "meta": {"weaker_true_label": "C", "false_labels": ["B", "D", "E"], "wildcard_false_label": "E"},
                       "sketch_usage_meta": usage})  # fmt: skip


def rubric(scores=(2, 2, 1, 1)) -> str:
    dims = dict(zip(("ALS", "TAS", "GPS", "DQS"), scores))
    return json.dumps({**{k: {"score": v, "justification": "ok"} for k, v in dims.items()},
                       "total_score": 8, "overall_assessment": "fine"})  # fmt: skip


def match(trivial: bool) -> str:
    return json.dumps({"match": trivial, "verdict": "matches" if trivial else "does not match",
                       "score": 0.9 if trivial else 0.1, "reason": "compared"})  # fmt: skip


def script(**override) -> dict:
    """Replies routed by each stage's system prompt (see methods/lmb/prompts.py)."""
    replies = {
        "sketch": json.dumps({"sketch": "Inclusion-exclusion gives an alternating sum; compare it with the series of 1/e.",
                              "expanded_sketch": "Write D_n by inclusion-exclusion and bound the tail of the series."}),
        "classify": json.dumps({"categories": ["Inequality or Bound", "Universal"], "reason": "a sharp bound"}),
        "stem": json.dumps(STEM),
        "repair": json.dumps(STEM),
        "distractors": distractors(),
        "revise": distractors(),
        "rubric": rubric(),
        "stem_only": json.dumps({"answer": "It is at most one."}),
        "match": match(False),
        "latex": json.dumps({"text": "fixed"}),
        "calibrate": "I cannot decide.",
    }  # fmt: skip
    replies.update(override)
    routes = [
        ("summarising how a theorem is proved", "sketch"), ("You classify research theorems", "classify"),
        ("You write the question stem and the keyed answer", "stem"), ("question stem self-contained", "repair"),
        ("You write the four other options", "distractors"), ("You audit the other options", "revise"),
        ("You grade a multiple-choice question", "rubric"), ("Answer the research question you are given", "stem_only"),
        ("You compare a free-form answer", "match"), ("You fix the LaTeX syntax", "latex"),
        ("answering a multiple-choice question", "calibrate"),
    ]  # fmt: skip
    return {"rules": [{"match": pattern, "reply": replies[name]} for pattern, name in routes],
            "default": {"reply": "unexpected prompt"}}  # fmt: skip


@pytest.fixture
def papers(fake_env) -> list[str]:
    root = resources.files("theorembench.data") / "papers"
    folders = sorted(str(p) for p in Path(str(root)).iterdir() if p.is_dir())
    res = runner.invoke(app, ["papers", "add", *folders, "--no-llm"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [line.split()[0] for line in res.output.splitlines() if line.strip()]


def write_config(tmp_path: Path, **sections) -> Path:
    base = {"latex": {"check": False}, "calibration": {"max_tokens": 100}}
    for key, values in sections.items():
        base.setdefault(key, {}).update(values)
    lines = []
    for section, values in base.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    path = tmp_path / "lmb.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def build(tmp_path: Path, paper_ids: list[str], *extra: str, cfg: Path | None = None, calibrator: str = CAL):
    args = ["lmb", "build", "--month", "2026-11", "--generator", GEN, "--judge", JUDGE, "--calibrator", calibrator,
            "--out-dir", str(tmp_path / "out"), "--concurrency", "1", "--config", str(cfg or write_config(tmp_path))]
    for pid in paper_ids:
        args += ["--paper", pid]
    res = runner.invoke(app, [*args, *extra], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    split = {name: json.loads((tmp_path / "out" / f"qaEval_202611_{name}.json").read_text())
             for name in ("full", "ge5", "ge5_hard", "pool")}  # fmt: skip
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    return res, split, summary


def steps(tmp_path: Path, stage: str) -> list:
    with Store(tmp_path / "home" / "theorembench.db") as store:
        return store.fetch(sa.text("SELECT key, status, reason, output, call_ids FROM steps WHERE stage = :stage"
                                   " ORDER BY key"), {"stage": stage})  # fmt: skip


def requests_to(fake_env, system_marker: str) -> int:
    """How many requests reached the server for one stage (told apart by its system prompt)."""
    return sum(1 for r in fake_env.requests if system_marker in r["body"]["messages"][0]["content"])
