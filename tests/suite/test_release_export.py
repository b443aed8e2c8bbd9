"""``release export``: Parquet + dataset card that `datasets` loads with typed rows, LMB JSON, JSONL; private
items without answers, papers' text only where their licence allows."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from helpers.lmb import CAL, GEN, JUDGE, papers, script, write_config  # noqa: F401 - papers is a fixture
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.store import open_store
from theorembench.store.papers import PaperRepo

runner = CliRunner()
CC_BY = "http://creativecommons.org/licenses/by/4.0/"
ARXIV_ONLY = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"


def _release(fake_env, papers, tmp_path: Path, licences: dict[str, str | None], private: float) -> Path:  # noqa: F811
    with open_store(None) as st:  # the commands' default store
        for pid, url in licences.items():
            PaperRepo(st).upsert(pid, license=url)
    fake_env.set_script(script())
    lmb = write_config(tmp_path)
    cfg = tmp_path / "release.toml"
    cfg.write_text(f'[models]\ngenerator = "{GEN}"\njudges = ["{JUDGE}"]\ncalibrator = "{CAL}"\n'
                   f'[methods]\neternal = false\nhybrid = false\nlmb_config = "{lmb}"\n'
                   f"[splits]\nprivate_fraction = {private}\n")  # fmt: skip
    res = runner.invoke(app, ["release", "build", "--month", "2026-11", "--config", str(cfg), "--out",
                              str(tmp_path / "releases"), "--concurrency", "1",
                              *[x for p in papers for x in ("--paper", p)]], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    return tmp_path / "releases" / "2026-11-r1"


def test_hf_export_loads_with_datasets_and_keeps_licences(fake_env, papers, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    folder = _release(fake_env, papers, tmp_path, {p: (CC_BY if i == 0 else ARXIV_ONLY) for i, p in enumerate(papers)},
                      private=0.0)  # fmt: skip
    manifest = json.loads((folder / "manifest.json").read_text())
    by_paper = {r["papers"][0]["paper_id"]: r["id"] for r in manifest["items"]}
    out = tmp_path / "export"
    res = runner.invoke(app, ["release", "export", str(folder), "--out", str(out), "--format", "hf", "--format",
                              "json", "--format", "jsonl"], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    import datasets

    ds = datasets.load_dataset(str(out), "lmb-2026-11", cache_dir=str(tmp_path / "hf-cache"))
    public = ds["public"]
    assert public.num_rows == len(manifest["items"]) and set(ds) == {"public"}  # no private item: no such split
    assert public.features["first_version"].dtype == "date32" and public.features["text_included"].dtype == "bool"
    assert public.features["options"].feature.dtype == "string"
    rows = {r["id"]: r for r in public}
    free, closed = by_paper.get(papers[0]), [by_paper[p] for p in papers[1:] if p in by_paper]
    assert free and closed, by_paper
    assert rows[free]["text_included"] is True and rows[free]["licenses"] == ["CC BY 4.0"]
    assert json.loads(rows[free]["item"])["theorem"]  # the paper's own text ships under CC BY
    for rid in closed:
        item = json.loads(rows[rid]["item"])
        assert rows[rid]["text_included"] is False and "theorem" not in item and "sketch" not in item
        assert "post_theorem_intro_text" not in item and item["mcq"]["question"]  # the question still ships
        assert rows[rid]["paper_ids"] == [next(p for p, r in by_paper.items() if r == rid)]
    for r in rows.values():
        assert r["answer"] == "A" and len(r["options"]) == 5 and isinstance(r["first_version"], dt.date | type(None))
    summary = json.loads((out / "export.json").read_text())
    assert summary["text_withheld"] == sorted(closed)
    card = (out / "README.md").read_text()
    assert card.startswith("---\nlicense: other\n") and "config_name: lmb-2026-11" in card
    assert all(f"`{rid}`" in card for rid in closed)
    # the released LMB JSON and the JSONL carry the same items
    [released] = list((out / "json").glob("qaEval_202611_ge5_hard.json"))
    assert [it["id"] for it in json.loads(released.read_text())] == [r.split("/", 1)[1] for r in rows]
    lines = (out / "jsonl" / "public.jsonl").read_text().splitlines()
    assert len(lines) == len(rows) and json.loads(lines[0])["release"] == "theorembench-2026-11-r1"


def test_private_items_ship_without_answers_and_their_keys_stay_in_the_release(fake_env, papers, tmp_path):  # noqa: F811
    folder = _release(fake_env, papers, tmp_path, dict.fromkeys(papers, CC_BY), private=1.0)
    hard = json.loads((folder / json.loads((folder / "manifest.json").read_text())["methods"]["lmb"]["files"]["hard"])
                      .read_text())  # fmt: skip
    out = tmp_path / "export"
    res = runner.invoke(app, ["release", "export", str(folder), "--out", str(out), "--format", "jsonl"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in (out / "jsonl" / "private.jsonl").read_text().splitlines()]
    assert len(rows) == len(hard) and not (out / "jsonl" / "public.jsonl").read_text().strip()
    keys = {k["id"]: k for k in map(json.loads, (folder / "private_keys.jsonl").read_text().splitlines())}
    exported = json.dumps(rows)
    for row, item in zip(rows, hard, strict=True):
        assert row["answer"] is None and row["answer_included"] is False
        mcq = row["item"]["mcq"]
        assert set(mcq) == {"question", "choices"} and [c["label"] for c in mcq["choices"]] == list("ABCDE")
        for field in ("hard_selection_meta", "qa quality eval", "stem_triviality"):
            assert field not in row["item"]
        # the keyed option is where the key file says, and nothing in the export says so
        key = keys[row["id"]]
        correct_text = item["mcq"]["correct_choice"]["text"]
        assert [c["text"] for c in mcq["choices"] if c["label"] == key["correct"]] == [correct_text]
    assert "private_keys" not in exported and not list(out.rglob("*key*"))
    bad = runner.invoke(app, ["release", "export", str(folder), "--out", str(out), "--format", "csv"])
    assert bad.exit_code == 2 and "--format must be one of hf, json, jsonl" in bad.output
