"""The paper pipeline: papers from arXiv or local files -> unpacked sources -> main theorems.

Stages, each resumable over the store:

* ``fetch``: arXiv metadata of a month (``sources.arxiv``) -> paper rows;
* ``download``: each paper's e-print, once, into the disk cache;
* ``unpack``: safe extraction into the paper's own folder (``sources.eprint``);
* ``extract``: main theorem with context (``latex.extract``), keyed by the
  extraction settings, so a rerun skips papers already done with the same settings.

A broken paper is recorded with its reason and the run goes on. A failed model call (or a reply
still malformed after the bounded repairs) is not an outcome: the paper is marked ``failed`` with
the reason, no theorem row is stored, and the next run extracts it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from theorembench.common.outputs import write_json
from theorembench.common.paths import home
from theorembench.latex.extract import ExtractionError, ExtractSettings, PaperText, extract_by_rules, load_paper
from theorembench.llm import LLM, LLMError, StructuredOutputError, record_calls
from theorembench.llm.local import stop_private_servers
from theorembench.pipeline.theorem_fallback import find_by_llm
from theorembench.store.papers import PaperRepo


def papers_dir() -> Path:
    return home() / "papers"


def _folder_name(paper_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", paper_id)


def paper_folder(paper_id: str) -> Path:
    return papers_dir() / _folder_name(paper_id) / "src"


# ---------------------------------------------------------------- unpacking


def unpack(repo: PaperRepo, paper_id: str, source: Path | bytes, *, is_folder: bool = False) -> bool:
    """Extract an e-print (or copy a folder) into the paper's folder; records the outcome."""
    from theorembench.sources.eprint import extract_eprint, extract_folder

    dest = paper_folder(paper_id)
    if is_folder:
        result = extract_folder(Path(source), dest)  # type: ignore[arg-type]
    else:
        result = extract_eprint(source, dest)
    problems = [f"rejected {r.member}: {r.reason}" for r in result.rejected]
    if not result.ok:
        repo.upsert(paper_id, status="skipped" if result.kind == "pdf" else "failed", reason=result.error,
                    eprint_kind=result.kind, problems=problems)  # fmt: skip
        return False
    repo.upsert(paper_id, status="unpacked", folder=str(dest), eprint_kind=result.kind, reason=None,
                problems=problems)  # fmt: skip
    return True


# Optional metadata beside a local paper's sources (in its folder): what arXiv would say of it, for releases
# and the contamination guard: {"license": "<licence URL>", "first_version": "YYYY-MM-DD", "title": "..."}.
# It is not part of the paper's text, so it does not change the paper's id.
SIDECAR = "theorembench-paper.json"


def local_metadata(path: Path) -> dict[str, Any]:
    """The sidecar's fields as paper columns (``license``, ``published``, ``title``), or none."""
    import json

    sidecar = path / SIDECAR if path.is_dir() else path.with_name(path.name + ".json")
    if not sidecar.is_file():
        return {}
    try:
        doc = json.loads(sidecar.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{sidecar}: not JSON ({exc})") from None
    fields = {"license": doc.get("license"), "published": doc.get("first_version"), "title": doc.get("title")}
    return {k: v for k, v in fields.items() if v}


def local_paper_id(path: Path) -> str:
    digest = hashlib.sha256()
    if path.is_dir():
        for f in sorted(p for p in path.rglob("*") if p.is_file() and p.name != SIDECAR):
            digest.update(str(f.relative_to(path)).encode())
            digest.update(f.read_bytes())
    else:
        digest.update(path.read_bytes())
    stem = path.name.split(".")[0] or "paper"
    if stem.lower() in ("eprint", "source", "sources", "src", "main", "paper", "tex", "latex"):
        stem = path.parent.name or stem  # .../polymath15-dbn/eprint.tar.gz -> polymath15-dbn
    return f"local:{_folder_name(stem)}-{digest.hexdigest()[:8]}"


def add_local(repo: PaperRepo, path: Path) -> str:
    """Register a local e-print file or source folder; returns the paper id."""
    path = path.expanduser().resolve()
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    paper_id = local_paper_id(path)
    known = local_metadata(path)
    if repo.get(paper_id) is None:
        repo.upsert(paper_id, source="local", status="new", meta={"path": str(path)}, **known)
    elif known:
        repo.upsert(paper_id, **known)  # the sidecar may have been edited since
    paper = repo.get(paper_id)
    assert paper is not None
    if paper["status"] in ("new", "failed"):
        unpack(repo, paper_id, path, is_folder=path.is_dir())
    return paper_id


# ---------------------------------------------------------------- extraction


class ExtractFailed(RuntimeError):
    """The extraction could not finish this time (a model call failed, or its reply stayed malformed after
    the bounded repairs): the paper is marked ``failed`` with the reason, no theorem row is stored, and
    the next run tries again."""


async def _extract_one(paper: PaperText, settings: ExtractSettings, *, llm: Any,
                       model: Any) -> tuple[dict[str, Any] | None, list[int], str]:  # fmt: skip
    """Stage ``extract``: the rules, then (when they find nothing and it is enabled) the LLM fallback stage.

    Raises :class:`ExtractFailed` when the fallback's model call fails: that is not an outcome."""
    record, reason = extract_by_rules(paper, settings)
    if record is not None:
        return record, [], reason
    if not settings.llm_fallback or llm is None or model is None:
        return None, [], f"{reason}; LLM fallback disabled"
    with record_calls() as calls:
        try:
            record, why = await find_by_llm(paper, settings, reason, llm=llm, model=model)
        except StructuredOutputError as exc:
            raise ExtractFailed(f"LLM fallback failed: malformed model output after bounded repairs "
                                f"({len(calls)} calls): {exc}") from None  # fmt: skip
        except LLMError as exc:
            raise ExtractFailed(f"LLM fallback failed: model call failed ({len(calls)} calls): {exc}") from None
    return record, list(calls), why


async def extract_theorems(
    repo: PaperRepo,
    paper_ids: list[str],
    settings: Any,
    *,
    llm: Any = None,
    model: Any = None,
    force: bool = False,
    on_paper: Callable[[str, dict[str, Any] | None], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Main theorem of each paper, skipping those already done with these settings."""

    key = settings.key()
    out: dict[str, dict[str, Any]] = {}
    for paper_id in paper_ids:
        paper = repo.get(paper_id)
        if paper is None:
            continue
        done = None if force else repo.theorem(paper_id, key)
        # "failed" with a folder: its extraction failed last time (not an outcome), so it runs again
        if done is None and paper["status"] in ("unpacked", "extracted", "failed") and paper["folder"]:
            await _extract_paper(repo, paper, settings, key, llm=llm, model=model)
            done = repo.theorem(paper_id, key)
        if done is not None:
            out[paper_id] = done
        if on_paper:
            on_paper(paper_id, done)
    return out


async def _extract_paper(repo: PaperRepo, paper: dict[str, Any], settings: Any, key: str, *, llm: Any,
                         model: Any) -> None:  # fmt: skip
    """Extract one unpacked paper and store the outcome; a failure marks the paper ``failed`` and stores none."""
    paper_id = paper["id"]
    try:
        text = load_paper(Path(paper["folder"]))
    except ExtractionError as exc:  # an outcome: the source has no usable main file
        repo.upsert(paper_id, status="failed", reason=str(exc))
        repo.put_theorem(paper_id, key, path="none", record=None, reason=str(exc), call_ids=[])
        return
    except Exception as exc:  # noqa: BLE001 - a broken paper must not stop the run
        repo.upsert(paper_id, status="failed", reason=f"extraction failed (runs again next time): unexpected error "
                                                      f"while reading the source: {type(exc).__name__}: {exc}")  # fmt: skip
        return
    # the flattened text with its source map, so any offset can be traced to file and line
    flat_path = Path(paper["folder"]).parent / "flat.json"
    write_json(flat_path, text.flat.to_dict(), indent=None)
    try:
        record, call_ids, reason = await _extract_one(text, settings, llm=llm, model=model)
    except ExtractFailed as exc:  # not an outcome: no theorem row, the next run asks again
        repo.upsert(paper_id, status="failed", reason=f"extraction failed (runs again next time): {exc}")
        return
    except Exception as exc:  # noqa: BLE001 - a broken paper must not stop the run
        repo.upsert(paper_id, status="failed", reason=f"extraction failed (runs again next time): unexpected error: "
                                                      f"{type(exc).__name__}: {exc}")  # fmt: skip
        return
    path = record["extraction_path"] if record else "none"
    if record is not None:
        record["paper_id"] = paper_id
        record["source"]["flat_document"] = str(flat_path)
    repo.put_theorem(paper_id, key, path=path, record=record, reason=reason, call_ids=call_ids)
    update: dict[str, Any] = {"status": "extracted", "reason": None if record else reason}
    if record and not paper.get("title") and record.get("title"):
        update["title"] = record["title"]
    if record and not paper.get("abstract") and record.get("abstract"):
        update["abstract"] = record["abstract"]
    repo.upsert(paper_id, **update)


# ---------------------------------------------------------------- arXiv


def arxiv_paper_id(arxiv_id: str, version: int | None) -> str:
    return f"{arxiv_id}v{version}" if version else arxiv_id


def _fill_licences(repo: PaperRepo, ids: list[str], *, base_url: str | None, delay_s: float, progress: Any) -> None:
    """Stage ``licences`` (``pipeline.paper_licences``): OAI-PMH on the same host as the API (a mirror's ``/oai``)."""
    from theorembench.pipeline.paper_licences import fill_licences
    from theorembench.sources.arxiv_oai import ArxivOai

    with ArxivOai(base_url, delay_s=delay_s) as oai:
        fill_licences(repo, ids, oai, progress=progress)


def fetch_month(
    repo: PaperRepo,
    *,
    month: str,
    category: str = "math.*",
    max_papers: int = 50,
    base_url: str | None = None,
    delay_s: float = 3.0,
    progress: Any = None,
    max_eprint_bytes: int | None = None,
) -> list[str]:
    """Metadata of a month's papers, their licences (OAI-PMH, asked again next run when unknown), then each
    e-print (cached) unpacked into its folder.

    ``max_eprint_bytes`` caps one e-print download (default ``sources.arxiv.DEFAULT_MAX_EPRINT_BYTES``);
    a paper over it is ``failed`` with the reason, and is tried again on a later run (with a larger cap)."""
    from theorembench.sources.arxiv import DEFAULT_MAX_EPRINT_BYTES, ArxivSource

    source = ArxivSource(base_url=base_url, cache_dir=home() / "eprints", delay_s=delay_s,
                         max_eprint_bytes=max_eprint_bytes or DEFAULT_MAX_EPRINT_BYTES)  # fmt: skip
    search_task = progress.add_task("arXiv query", total=max_papers, item=month) if progress else None

    def on_found(n: int) -> None:
        if progress is not None:
            progress.update(search_task, completed=min(n, max_papers))

    metas = source.search_month(month, category=category, max_results=max_papers, progress=on_found)
    ids: list[str] = []
    for meta in metas:
        paper_id = arxiv_paper_id(meta.arxiv_id, meta.version)
        ids.append(paper_id)
        if repo.get(paper_id) is None:
            repo.upsert(
                paper_id, source="arxiv", arxiv_id=meta.arxiv_id, version=meta.version, month=month,
                title=meta.title, authors=meta.authors, abstract=meta.abstract,
                primary_category=meta.primary_category, categories=meta.categories,
                published=meta.published, updated=meta.updated, license=meta.license,
                meta=meta.to_dict(), status="new",
            )  # fmt: skip
    _fill_licences(repo, ids, base_url=base_url, delay_s=delay_s, progress=progress)
    dl_task = progress.add_task("e-prints", total=len(ids), item="") if progress else None
    for paper_id in ids:
        paper = repo.get(paper_id)
        assert paper is not None
        if paper["status"] in ("new", "failed") and not paper.get("folder"):
            try:
                eprint = source.download_eprint(paper["arxiv_id"], paper["version"])
            except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
                repo.upsert(paper_id, status="failed", reason=f"e-print download failed: {exc}")
            else:
                repo.upsert(paper_id, eprint_path=str(eprint.path), eprint_kind=eprint.kind,
                            eprint_sha256=eprint.sha256)  # fmt: skip
                if eprint.kind == "pdf":
                    repo.upsert(paper_id, status="skipped", reason="the e-print is a PDF only (no LaTeX source)")
                else:
                    unpack(repo, paper_id, eprint.path)
        if progress is not None:
            progress.update(dl_task, advance=1, item=paper_id)
    return ids


# ---------------------------------------------------------------- the service the commands call

DEFAULT_EXTRACTOR = "local/smollm2"


def extract_papers(repo: PaperRepo, paper_ids: list[str], settings: ExtractSettings, *,
                   model: str | None = None, force: bool = False,
                   on_paper: Callable[[str, dict[str, Any] | None], None] | None = None) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Main theorems of stored papers; the LLM (``model``, else $THEOREMBENCH_EXTRACTOR_MODEL, else the
    embedded model) is started only when the settings allow the fallback. Raises ``UserError`` for a bad model."""
    llm = spec = None
    if settings.llm_fallback:
        llm = LLM(repo.store)
        spec = llm.resolve(model or os.environ.get("THEOREMBENCH_EXTRACTOR_MODEL") or DEFAULT_EXTRACTOR)

    async def go() -> dict[str, dict[str, Any]]:
        try:
            return await extract_theorems(repo, paper_ids, settings, llm=llm, model=spec, force=force, on_paper=on_paper)
        finally:
            if llm is not None:
                await llm.aclose()

    try:
        return asyncio.run(go())
    finally:
        stop_private_servers()
