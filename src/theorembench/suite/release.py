"""``release build``: a month of fresh mathematics, every method, one versioned release with its manifest.

The month's papers are fetched from arXiv (or a mirror; or given as stored or local papers), their
main theorems extracted, then LiveMathematicianBench, EternalMath and Proof2Hybrid build from them,
each through its own resumable steps, so a rerun pays for no call twice. The release is the folder
``<out>/<YYYY-MM>-r<N>/`` with each method's outputs and ``manifest.json``:

- the release id and date, theorembench's version, a digest of its code and each method's prompts;
- per method the counts and the funnel of its build;
- one row per item (:mod:`release_items`): its source papers with arXiv id, first-version date and
  licence, its split (public or private: a private item's answers are never exported) and its
  retirement date;
- what changed against the previous release of the month.

A rerun whose items, code and prompts are unchanged finds its release and makes no new version; a
change makes ``r<N+1>``. Retiring an item (``retire``) is recorded in the release's manifest and carried
into later releases of the month.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pydantic import Field

import theorembench
from theorembench.common.digest import json_digest
from theorembench.common.errors import InvalidSetting, UserError
from theorembench.common.outputs import write_json
from theorembench.common.progress import OnStep
from theorembench.common.settings import Section, Settings
from theorembench.store import Store
from theorembench.store.papers import PaperRepo
from theorembench.suite.release_items import changes, item_rows, licence_summary

MANIFEST = "manifest.json"


class ReleaseModels(Section):
    generator: str = Field("local/smollm2", description="writes every method's items")
    judges: list[str] = Field(default_factory=list, description="judges of every method; empty = the generator")
    calibrator: str = Field("", description="LMB hardness calibration; empty = the generator")


class ReleaseMethods(Section):
    lmb: bool = Field(True, description="LiveMathematicianBench questions (the hard split)")
    eternal: bool = Field(True, description="EternalMath instances")
    hybrid: bool = Field(True, description="Proof2Hybrid questions from the month's papers")
    lmb_config: str = Field("", description="an `lmb config` file; empty = its defaults")
    eternal_config: str = Field("", description="an `eternal config` file; empty = its defaults")
    hybrid_config: str = Field("", description="a `hybrid config` file; empty = its defaults")


class ReleaseSplits(Section):
    private_fraction: float = Field(0.2, ge=0.0, le=1.0, description="share of items kept private (answers never "
                                                                     "exported), drawn per item")  # fmt: skip
    seed: str = Field("theorembench", description="the draw's seed: a release keeps its split across rebuilds")


class ReleaseFetch(Section):
    category: str = Field("math.*", description="arXiv category of the month's papers")
    max_papers: int = Field(50, ge=1, description="papers fetched for the month")
    llm_fallback: bool = Field(True, description="the generator looks for the main theorem where the rule path "
                                                 "finds none")  # fmt: skip


class ReleaseSettings(Settings):
    TOML_HEADER = "theorembench release build: a month's release over every method."
    models: ReleaseModels = Field(default_factory=ReleaseModels)
    methods: ReleaseMethods = Field(default_factory=ReleaseMethods)
    splits: ReleaseSplits = Field(default_factory=ReleaseSplits)
    fetch: ReleaseFetch = Field(default_factory=ReleaseFetch)


@dataclass
class ReleaseResult:
    folder: Path
    manifest: dict[str, Any]
    new: bool  # False: an unchanged rebuild found the release it had made before


def release_settings(path: str | Path | None = None, **overrides: Any) -> ReleaseSettings:
    return ReleaseSettings.load(path, **overrides).check()


def code_version() -> dict[str, str]:
    """theorembench's version and a digest of its source files (what shaped every item)."""
    root = Path(theorembench.__file__).parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return {"version": theorembench.__version__, "code_digest": h.hexdigest()[:16]}


def prompt_digests() -> dict[str, str]:
    """A digest per method of its prompt modules (their source and current constants)."""
    from theorembench.methods.eternal import prompts as eternal_prompts
    from theorembench.methods.hybrid import prompts as hybrid_prompts
    from theorembench.methods.lmb import check_prompts, writing_prompts
    from theorembench.methods.lmb import prompts as lmb_prompts
    from theorembench.pipeline.identity import source_digest

    modules = {"lmb": [lmb_prompts, writing_prompts, check_prompts], "eternal": [eternal_prompts],
               "hybrid": [hybrid_prompts]}  # fmt: skip
    return {m: source_digest(mods, constants=True) for m, mods in modules.items()}


def _versions(out: Path, label: str) -> list[tuple[int, Path]]:
    found = []
    for folder in out.glob(f"{label}-r*"):
        m = re.fullmatch(rf"{re.escape(label)}-r(\d+)", folder.name)
        if m and (folder / MANIFEST).is_file():
            found.append((int(m.group(1)), folder))
    return sorted(found)


def read_manifest(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{folder}: not a release folder ({MANIFEST}: {exc})") from None


def _month(month: str) -> str:
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
        raise InvalidSetting("month", f"must be YYYY-MM, got {month!r}")
    return month


def _papers(store: Store, month: str, settings: ReleaseSettings, paper_ids: Sequence[str],
            local: Sequence[Path], base_url: str | None, progress: Any) -> list[str]:  # fmt: skip
    """The month's papers in the store, fetched from arXiv unless papers are given, with main theorems."""
    from theorembench.latex.extract import ExtractSettings
    from theorembench.pipeline.papers import add_local, extract_papers, fetch_month

    repo = PaperRepo(store)
    ids = list(dict.fromkeys(paper_ids))
    ids += [add_local(repo, Path(p)) for p in local]
    if not paper_ids and not local:
        ids = fetch_month(repo, month=month, category=settings.fetch.category, max_papers=settings.fetch.max_papers,
                          base_url=base_url, progress=progress)  # fmt: skip
    missing = [pid for pid in ids if repo.get(pid) is None]
    if missing:
        raise InvalidSetting("paper_ids", f"not in the store: {', '.join(missing)} (add them with papers add)")
    extract_papers(repo, ids, ExtractSettings(llm_fallback=settings.fetch.llm_fallback),
                   model=settings.models.generator)  # each paper once: a rerun finds its theorem stored
    return ids


def build_release(store: Store, *, month: str, settings: ReleaseSettings | None = None,
                  paper_ids: Sequence[str] = (), local: Sequence[Path] = (), out: Path = Path("releases"),
                  overrides: Mapping[str, Mapping[str, Any]] | None = None, base_url: str | None = None,
                  concurrency: int = 4, accept_weak_isolation: bool | None = None, on_step: OnStep | None = None,
                  progress: Any = None, today: date | None = None) -> ReleaseResult:  # fmt: skip
    """Build (or find) the month's release; ``overrides`` holds dotted settings per method (``{"lmb": {...}}``)."""
    cfg = settings or ReleaseSettings()
    label = _month(month)
    ids = _papers(store, label, cfg, paper_ids, local, base_url, progress)
    staging = out / f".{label}-building"
    built = _build_methods(store, label, cfg, ids, staging, overrides or {}, concurrency, accept_weak_isolation,
                           on_step)  # fmt: skip
    versions = _versions(out, label)
    previous = read_manifest(versions[-1][1]) if versions else None
    retired = {r["id"]: r["retired"] for r in (previous or {}).get("items", []) if r.get("retired")}
    repo = PaperRepo(store)
    papers = {pid: repo.get(pid) for pid in ids}
    rows = item_rows({m: b.files for m, b in built.items()}, {k: v for k, v in papers.items() if v},
                     split_seed=cfg.splits.seed, private_fraction=cfg.splits.private_fraction, retired=retired)
    content = {"items": rows, "code": code_version(), "prompts": prompt_digests(), "settings": cfg.model_dump()}
    digest = json_digest(content, 16)
    for number, folder in versions:
        if read_manifest(folder).get("content_digest") == digest:
            shutil.rmtree(staging, ignore_errors=True)
            return ReleaseResult(folder, read_manifest(folder), new=False)
    number = (versions[-1][0] + 1) if versions else 1
    folder = out / f"{label}-r{number}"
    staging.rename(folder)
    manifest = {
        "release": f"theorembench-{label}-r{number}", "month": label,
        "date": (today or datetime.now(UTC).date()).isoformat(), "content_digest": digest,
        "code": content["code"], "prompts": content["prompts"], "settings": content["settings"],
        "methods": {m: {"counts": _count(rows, m), "funnel": b.funnel,
                        "files": {k: str(p.relative_to(staging)) if p.is_relative_to(staging) else str(p)
                                  for k, p in b.files.items()}} for m, b in built.items()},
        "papers": len(ids), "items": rows, "licences": licence_summary(rows),
        "changes": changes(rows, previous["items"] if previous else None),
        "shortcut_audit": _audit(built, staging, folder),
        "previous": previous["release"] if previous else None,
    }  # fmt: skip
    write_json(folder / MANIFEST, manifest)
    return ReleaseResult(folder, manifest, new=True)


def _audit(built: Mapping[str, Any], staging: Path, folder: Path) -> dict[str, Any] | None:
    """The LMB build's shortcut audit, in short: a release whose shortcut baselines beat chance by more than their
    interval is flagged here (``flagged`` names them; the full audit is the build's ``shortcut_audit.json``)."""
    lmb = built.get("lmb")
    built_at = lmb.files.get("shortcut_audit") if lmb is not None else None
    if built_at is None:
        return None
    relative = Path(built_at).relative_to(staging)  # the build wrote it in the staging folder, now the release's
    if not (folder / relative).is_file():
        return None
    audit = json.loads((folder / relative).read_text(encoding="utf-8"))
    return {"flagged": audit.get("flagged") or [], "meta_option": audit.get("meta_option"),
            "file": str(relative)}  # fmt: skip


def _count(rows: list[dict[str, Any]], method: str) -> dict[str, int]:
    mine = [r for r in rows if r["method"] == method]
    return {"items": len(mine), "public": sum(r["split"] == "public" for r in mine),
            "private": sum(r["split"] == "private" for r in mine), "retired": sum(bool(r["retired"]) for r in mine)}


def _build_methods(store: Store, label: str, cfg: ReleaseSettings, ids: list[str], staging: Path,
                   overrides: Mapping[str, Mapping[str, Any]], concurrency: int, accept: bool | None,
                   on_step: OnStep | None) -> dict[str, Any]:  # fmt: skip
    """Each enabled method's build into the staging folder (each resumable through its own steps)."""
    m, models = cfg.methods, cfg.models
    judges = models.judges or None
    built: dict[str, Any] = {}
    if m.lmb:
        from theorembench.methods.lmb.build import build_lmb

        built["lmb"] = build_lmb(store, month=label, config=Path(m.lmb_config) if m.lmb_config else None,
                                 generator=models.generator, judges=judges, calibrator=models.calibrator or None,
                                 papers=ids, out_dir=staging / "lmb", overrides=dict(overrides.get("lmb") or {}),
                                 concurrency=concurrency, on_step=on_step)  # fmt: skip
    if m.eternal:
        from theorembench.methods.eternal.build import build_eternal

        built["eternal"] = build_eternal(store, paper_ids=ids, generator=models.generator,
                                         judge=(judges or [None])[0], config=m.eternal_config or None,
                                         out_dir=staging / "eternal", overrides=dict(overrides.get("eternal") or {}),
                                         concurrency=concurrency, accept_weak_isolation=accept,
                                         on_step=on_step)  # fmt: skip
    if m.hybrid:
        from theorembench.methods.hybrid.service import build_hybrid

        built["hybrid"] = build_hybrid(store, papers=ids, generators=[models.generator], judges=judges,
                                       config=Path(m.hybrid_config) if m.hybrid_config else None,
                                       out_dir=staging / "hybrid", overrides=dict(overrides.get("hybrid") or {}),
                                       concurrency=concurrency, on_step=on_step)  # fmt: skip
    if not built:
        raise InvalidSetting("methods", "every method is turned off: nothing to release")
    return built


def retire(folder: Path, item: str, *, on: date, reason: str = "") -> dict[str, Any]:
    """Retire ``item`` of the release in ``folder`` from ``on``: recorded in its manifest (and carried into the
    month's later releases); a retired item no longer counts in scores on the release."""
    manifest = read_manifest(folder)
    rows = {r["id"]: r for r in manifest["items"]}
    if item not in rows:
        raise InvalidSetting("item", f"{item!r} is not an item of {manifest['release']}")
    rows[item]["retired"] = on.isoformat()
    if reason:
        rows[item]["retired_reason"] = reason
    manifest.setdefault("retirements", []).append({"item": item, "date": on.isoformat(), "reason": reason})
    write_json(folder / MANIFEST, manifest)
    return manifest


__all__ = ["MANIFEST", "ReleaseResult", "ReleaseSettings", "build_release", "code_version", "prompt_digests",
           "read_manifest", "release_settings", "retire"]  # fmt: skip
