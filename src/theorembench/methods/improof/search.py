"""The harness's ``search`` tool: full-text search (SQLite FTS5) over the papers in the store.

One document per stored paper: its title, abstract and the texts of its extracted main theorems
(every extraction setting's). The index is a SQLite file of its own beside the home folder's
other files, one per store, and whatever backend the store uses. It holds a fingerprint of the
papers and theorems it was built from and is rebuilt when they change (a paper added or updated,
a theorem extracted again). Queries are plain words: each is quoted, so FTS5 syntax in a model's
query is never interpreted, and results are ranked by BM25.

A hosted search provider (Inspect's ``web_search``) replaces this tool when one is configured.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorembench.common import paths
from theorembench.common.errors import UserError
from theorembench.store import Store
from theorembench.store.papers import PaperRepo

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 32
SNIPPET_TOKENS = 24

#: Hosted providers of Inspect's ``web_search`` and the environment variables each needs.
HOSTED = {
    "tavily": ("TAVILY_API_KEY",),
    "exa": ("EXA_API_KEY",),
    "google": ("GOOGLE_CSE_ID", "GOOGLE_CSE_API_KEY"),
    "openai": (),  # the model's own search (OpenAI models only)
    "anthropic": (),  # the model's own search (Anthropic models only)
}


@dataclass(frozen=True)
class Hit:
    paper_id: str
    arxiv_id: str | None
    title: str
    snippet: str


def index_path(store: Store) -> Path:
    """The index file of ``store``: one per store location, in the home folder."""
    digest = hashlib.sha256(str(store.url).encode()).hexdigest()[:16]
    return paths.home() / "improof" / f"papers-{digest}.fts.sqlite"


def _theorem_text(record: Any) -> str:
    if isinstance(record, str):
        try:
            record = json.loads(record)
        except ValueError:
            return ""
    if not isinstance(record, dict):
        return ""
    theorem = record.get("theorem") or {}
    return str(record.get("expanded_theorem") or theorem.get("content") or "")


def _documents(store: Store) -> tuple[list[tuple[str, str | None, str, str, str]], str]:
    """The documents to index and the fingerprint of what they were made from."""
    fingerprint = hashlib.sha256()
    indexed = PaperRepo(store).for_search()
    for p in indexed:
        for settings_key, created_at, _record in p["theorem_records"]:
            fingerprint.update(f"t|{p['id']}|{settings_key}|{created_at}\n".encode())
    docs = []
    for p in indexed:
        fingerprint.update(f"p|{p['id']}|{p['updated_at']}\n".encode())
        texts = [text for _k, _t, record in p["theorem_records"] if (text := _theorem_text(record))]
        docs.append((p["id"], p["arxiv_id"], p["title"], p["abstract"], "\n\n".join(texts)))
    return docs, fingerprint.hexdigest()


def _built_from(path: Path) -> str | None:
    """The fingerprint an existing index was built from (None: no usable index)."""
    if not path.is_file():
        return None
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def ensure_index(store: Store, path: Path | None = None) -> Path:
    """The index of the store's papers, built or rebuilt when the papers or theorems changed; returns its path.

    A rebuild writes a new file and moves it into place, so a search running meanwhile reads the old one whole.
    """
    path = path or index_path(store)
    docs, fingerprint = _documents(store)
    if _built_from(path) == fingerprint:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    try:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(paper_id UNINDEXED, arxiv_id UNINDEXED, title, abstract, "
                   "theorems, tokenize = 'porter unicode61')")  # fmt: skip
        db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?)", docs)
        db.executemany("INSERT INTO meta VALUES (?, ?)", [("fingerprint", fingerprint), ("documents", str(len(docs)))])
        db.commit()
    finally:
        db.close()
    os.replace(tmp, path)
    return path


def fts_query(text: str) -> str | None:
    """A safe FTS5 query from free text: each word quoted, any word may match (BM25 ranks); None without words."""
    words = _WORD.findall(text)[:MAX_QUERY_WORDS]
    return " OR ".join('"' + w.replace('"', "") + '"' for w in words) or None


def search(path: Path, query: str, limit: int = 5) -> list[Hit]:
    """The best ``limit`` papers for ``query`` (BM25), with a short snippet of the matching text."""
    q = fts_query(query)
    if q is None or not path.is_file():
        return []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT paper_id, arxiv_id, title, snippet(docs, -1, '[', ']', ' ... ', ?) FROM docs WHERE docs MATCH ? "
            "ORDER BY bm25(docs, 10.0, 4.0, 2.0) LIMIT ?",
            (SNIPPET_TOKENS, q, max(1, min(limit, 20))),
        ).fetchall()
    return [Hit(r[0], r[1], r[2] or "(untitled)", " ".join((r[3] or "").split())) for r in rows]


def format_hits(hits: list[Hit]) -> str:
    """Search results as the tool's text answer."""
    if not hits:
        return "No papers in the library match this query."
    out = []
    for n, h in enumerate(hits, start=1):
        where = f"arXiv:{h.arxiv_id}" if h.arxiv_id else h.paper_id
        out.append(f"{n}. {h.title} ({where})\n   {h.snippet}")
    return "\n".join(out)


def paper_search_tool(path: Path) -> Any:
    """The ``search`` tool for Inspect over the index at ``path`` (read-only, on the host)."""
    import asyncio

    from inspect_ai.tool import tool

    @tool(name="search")
    def paper_search() -> Any:
        async def execute(query: str, max_results: int = 5) -> str:
            """Search the local library of mathematical papers (titles, abstracts, main theorems).

            Args:
                query: Words to look for, e.g. "stable graphs moduli space genus".
                max_results: How many papers to return (1 to 20).

            Returns:
                The best matching papers with a snippet each.
            """
            return format_hits(await asyncio.to_thread(search, path, query, max_results))

        return execute

    return paper_search()


def hosted_search(provider: str, model_provider: str) -> Any:
    """Inspect's ``web_search`` tool for a configured hosted provider; UserError when it cannot work."""
    from inspect_ai.tool import web_search

    if provider not in HOSTED:
        raise UserError(f"unknown search provider {provider!r}: use one of {', '.join(HOSTED)}")
    missing = [v for v in HOSTED[provider] if not os.environ.get(v)]
    if missing:
        raise UserError(f"search provider {provider}: set {' and '.join(missing)}")
    if provider in ("openai", "anthropic") and model_provider != provider:
        raise UserError(f"search provider {provider} is the model's own search: it works only with {provider}/ models")
    return web_search({provider: True})


def index_documents(path: Path) -> int:
    """How many papers an index holds (0 for a missing or unreadable one)."""
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            row = db.execute("SELECT COUNT(*) FROM docs").fetchone()
    except sqlite3.Error:
        return 0
    return int(row[0]) if row else 0
