"""arXiv e-print files: what kind a file is, and how the download cache lays them out.

* :func:`detect_kind` classifies an e-print from its first bytes (one of
  :data:`KINDS`); :func:`describe_file` gives kind, size and SHA-256 of a file on
  disk as an :class:`EprintFile`.
* The cache holds ``<id>[v<N>]<ext>`` (``/`` of old-style ids as ``_``), the
  extension chosen by the kind: :func:`cache_name`, :func:`find_cached`.
  :func:`stream_to_partial` writes a download to a ``.part`` file in the cache
  (hashing it and keeping its head) so that the caller can rename it into place.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

HEAD_BYTES = 64 * 1024
"""How many leading bytes of a file :func:`detect_kind` is given."""

KINDS = ("tar.gz", "gz", "pdf", "tar", "tex", "unknown")
EXTENSIONS = {
    "tar.gz": ".tar.gz",
    "gz": ".gz",
    "pdf": ".pdf",
    "tar": ".tar",
    "tex": ".tex",
    "unknown": ".bin",
}
"""The cache file extension of each kind."""


@dataclass(frozen=True)
class EprintFile:
    """A downloaded e-print in the cache; ``kind`` is one of :data:`KINDS`."""

    path: Path
    kind: str
    size: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "kind": self.kind, "size": self.size, "sha256": self.sha256}


# --------------------------------------------------------------------------- e-print kinds


def _looks_like_tar(block: bytes) -> bool:
    """A tar header: POSIX/GNU magic at 257, or (old V7 tars) a valid header checksum."""
    if len(block) < 512:
        return len(block) >= 262 and block[257:262] == b"ustar"
    if block[257:262] == b"ustar":
        return True
    if not block[:100].strip(b"\0"):
        return False
    stored = block[148:156].replace(b"\0", b" ").strip()
    if not stored or any(c not in b"01234567" for c in stored):
        return False
    computed = sum(block[:148]) + 8 * 0x20 + sum(block[156:512])
    return int(stored, 8) == computed


def _looks_like_latex(head: bytes) -> bool:
    if b"\0" in head[:4096]:
        return False
    text = head[:4096].decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text or text.startswith("%!"):  # PostScript, not TeX
        return False
    if text[0] in "\\%":
        return True
    return any(m in text for m in ("\\documentclass", "\\documentstyle", "\\begin{document}"))


def detect_kind(head: bytes) -> str:
    """Classify an e-print from its first bytes (give at least a few KiB; :data:`HEAD_BYTES`).

    ``"tar.gz"`` gzip whose decompressed start is a tar header; ``"gz"`` any
    other gzip (arXiv's form for a single gzipped .tex); ``"pdf"`` a PDF-only
    submission; ``"tar"`` an uncompressed tar; ``"tex"`` plain LaTeX text;
    ``"unknown"`` anything else (HTML error pages, PostScript, empty input).
    """
    head = bytes(head)
    if head[:2] == b"\x1f\x8b":
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 512)
        except zlib.error:
            inner = b""
        return "tar.gz" if _looks_like_tar(inner) else "gz"
    if head.lstrip(b" \t\r\n")[:4] == b"%PDF":
        return "pdf"
    if _looks_like_tar(head[:512]):
        return "tar"
    if _looks_like_latex(head):
        return "tex"
    return "unknown"


def describe_file(path: Path) -> EprintFile:
    """Kind, size and SHA-256 of an e-print already on disk."""
    digest, size, head = hashlib.sha256(), 0, b""
    with open(path, "rb") as fh:
        while chunk := fh.read(1024 * 1024):
            if not head:
                head = chunk[:HEAD_BYTES]
            digest.update(chunk)
            size += len(chunk)
    return EprintFile(path=Path(path), kind=detect_kind(head), size=size, sha256=digest.hexdigest())


# --------------------------------------------------------------------------- the cache


def cache_name(arxiv_id: str, version: int | None) -> str:
    """The cache file name of an id/version, without its extension."""
    return arxiv_id.replace("/", "_") + (f"v{version}" if version else "")


def find_cached(cache_dir: Path, name: str) -> EprintFile | None:
    """The cached e-print called ``name`` (any kind's extension), if any."""
    for ext in EXTENSIONS.values():
        path = cache_dir / (name + ext)
        if path.is_file():
            return describe_file(path)
    return None


def stream_to_partial(resp: requests.Response, cache_dir: Path, name: str) -> tuple[Path, bytes, int, str]:
    """Write a streamed download to a fresh ``.<name>.*.part`` file in ``cache_dir`` (fsynced).

    Returns the file, its first :data:`HEAD_BYTES` bytes, its size and its
    SHA-256; the file is removed if the download fails.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=cache_dir)
    tmp = Path(tmp_name)
    digest, size, head = hashlib.sha256(), 0, bytearray()
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in resp.raw.stream(64 * 1024, decode_content=False):
                out.write(chunk)
                digest.update(chunk)
                size += len(chunk)
                if len(head) < HEAD_BYTES:
                    head += chunk[: HEAD_BYTES - len(head)]
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, bytes(head), size, digest.hexdigest()


__all__ = [
    "EXTENSIONS",
    "HEAD_BYTES",
    "KINDS",
    "EprintFile",
    "cache_name",
    "describe_file",
    "detect_kind",
    "find_cached",
    "stream_to_partial",
]
