"""Stage ``licences`` of the paper pipeline: each arXiv paper's licence and first-version date from OAI-PMH.

The export API that finds a month's papers does not say under which licence they were posted, and a
release may quote a paper's text only under a licence that allows it (``sources.licences``). So after
the papers are stored, each arXiv paper still without a licence is asked about once through OAI-PMH
(``sources.arxiv_oai``), and its row gets ``license`` and, in its meta, ``created`` (the date of its
first version, when not set yet) and ``oai_checked``.

What is not learnt now is asked again on the next run, never stored as "no licence" for ever:

* a paper OAI-PMH has no record of (``idDoesNotExist``: its index is updated nightly, so a paper of
  today may not be in it yet) keeps ``license`` None and is not marked checked;
* a request OAI-PMH refuses (an OAI error other than ``idDoesNotExist``, HTTP 400) skips that paper;
* a transport failure that outlasts the retries (throttling, arXiv down) stops this stage for the run,
  logged; the papers not reached keep ``license`` None and are not marked checked.

A paper whose record states no licence is marked checked with ``license`` None: that is arXiv's answer.
"""

from __future__ import annotations

import logging
from typing import Any

from theorembench.sources.arxiv_errors import ArxivError, ArxivQueryError
from theorembench.sources.arxiv_oai import ArxivOai, OaiRecord, first_version_date
from theorembench.store.papers import PaperRepo

log = logging.getLogger(__name__)


def needs_licence(paper: dict[str, Any] | None) -> bool:
    """An arXiv paper whose licence is unknown and that OAI-PMH has not answered for yet."""
    if paper is None or paper.get("source") != "arxiv" or not paper.get("arxiv_id") or paper.get("license"):
        return False
    return not (paper.get("meta") or {}).get("oai_checked")


def apply_record(repo: PaperRepo, paper: dict[str, Any], record: OaiRecord) -> None:
    """Store what the OAI record says: its licence, and the first-version date in the meta if not set."""
    meta = dict(paper.get("meta") or {})
    if not meta.get("created"):
        created = first_version_date(record.created, paper.get("published"))
        if created:
            meta["created"] = created
    meta["oai_checked"] = True
    meta["oai_license"] = record.license
    fields: dict[str, Any] = {"meta": meta}
    if record.license:
        fields["license"] = record.license
    repo.upsert(paper["id"], **fields)


def fill_licences(repo: PaperRepo, paper_ids: list[str], oai: ArxivOai, *, progress: Any = None) -> dict[str, int]:
    """Ask OAI-PMH about every paper of ``paper_ids`` that :func:`needs_licence`; returns counts
    (``asked``, ``found``, ``missing``, ``refused``, ``not_reached``) for the caller to report."""
    todo = [pid for pid in paper_ids if needs_licence(repo.get(pid))]
    counts = {"asked": 0, "found": 0, "missing": 0, "refused": 0, "not_reached": 0}
    task = progress.add_task("arXiv licences", total=len(todo), item="") if progress is not None else None
    for n, paper_id in enumerate(todo):
        paper = repo.get(paper_id)
        assert paper is not None
        if progress is not None:
            progress.update(task, advance=1, item=paper_id)
        try:
            record = oai.get_record(paper["arxiv_id"])
        except (ArxivQueryError, ValueError) as exc:  # this paper's request was refused: the others go on
            counts["refused"] += 1
            log.warning("OAI-PMH refused the request for %s (asked again next run): %s", paper_id, exc)
            continue
        except ArxivError as exc:
            counts["not_reached"] = len(todo) - n
            log.warning("OAI-PMH failed for %s; %d papers keep an unknown licence until the next run: %s",
                        paper_id, len(todo) - n, exc)  # fmt: skip
            break
        counts["asked"] += 1
        if record is None:
            counts["missing"] += 1
        else:
            counts["found"] += 1
            apply_record(repo, paper, record)
    return counts


__all__ = ["apply_record", "fill_licences", "needs_licence"]
