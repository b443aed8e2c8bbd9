"""arXiv e-print files: what kind a file is, and how the download cache lays them out.

* :func:`describe_file` gives kind (by :func:`~.eprint_kind.detect_kind`, the one detector),
  size and SHA-256 of a file on disk as an :class:`EprintFile`.
* The cache holds ``<id>[v<N>]<ext>`` (``/`` of old-style ids as ``_``), the
  extension chosen by the kind: :func:`cache_name`, :func:`find_cached`.
  :func:`stream_to_partial` writes a download to a ``.part`` file in the cache
  (hashing it and keeping its head) so that the caller can rename it into place.
* Every download has a size cap (:data:`DEFAULT_MAX_EPRINT_BYTES` for an e-print,
  configurable per :class:`~.arxiv.ArxivSource`), enforced while the body streams in by
  :func:`capped_chunks`: an announced ``Content-Length`` over the cap is refused before
  any byte is read, and a body without one is cut off as soon as it passes the cap.
  Either way :class:`~.arxiv_errors.DownloadTooLarge` says so and nothing stays in the cache.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import requests

from theorembench.sources.arxiv_errors import DownloadTooLarge
from theorembench.sources.eprint_kind import HEAD_BYTES, KINDS, detect_kind

MB = 1024 * 1024
DEFAULT_MAX_EPRINT_BYTES = 100 * MB
"""Default cap on one e-print download: twice arXiv's 50 MB limit on a submission's size."""

CHUNK_BYTES = 64 * 1024
"""How much of a body is read at a time (a capped download reads at most this much past its cap)."""

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


def _too_large(what: str, url: str, limit: int, bytes_read: int, announced: int | None) -> DownloadTooLarge:
    seen = f"it announces {announced} bytes" if announced is not None else f"{bytes_read} bytes read when stopped"
    return DownloadTooLarge(f"the {what} {url} is larger than the cap of {limit} bytes ({seen}); "
                            "not downloaded", limit=limit, bytes_read=bytes_read, url=url)  # fmt: skip


def capped_chunks(resp: requests.Response, limit: int, what: str) -> Iterator[bytes]:
    """The raw body of a streamed response in chunks, raising :class:`DownloadTooLarge` past ``limit`` bytes.

    A ``Content-Length`` over the cap is refused before the body is read; otherwise the bytes are
    counted as they arrive, so at most :data:`CHUNK_BYTES` past the cap are ever read.
    """
    announced = resp.headers.get("Content-Length")
    if announced is not None and announced.strip().isdigit() and int(announced) > limit:
        raise _too_large(what, resp.url, limit, 0, int(announced))
    size = 0
    for chunk in resp.raw.stream(CHUNK_BYTES, decode_content=False):
        size += len(chunk)
        if size > limit:
            raise _too_large(what, resp.url, limit, size, None)
        yield chunk


def stream_to_partial(resp: requests.Response, cache_dir: Path, name: str, *,
                      max_bytes: int = DEFAULT_MAX_EPRINT_BYTES) -> tuple[Path, bytes, int, str]:  # fmt: skip
    """Write a streamed download to a fresh ``.<name>.*.part`` file in ``cache_dir`` (fsynced).

    Returns the file, its first :data:`HEAD_BYTES` bytes, its size and its
    SHA-256; the file is removed if the download fails, or goes over ``max_bytes``
    (:class:`DownloadTooLarge`, raised while streaming).
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=cache_dir)
    tmp = Path(tmp_name)
    digest, size, head = hashlib.sha256(), 0, bytearray()
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in capped_chunks(resp, max_bytes, "e-print"):
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
    "CHUNK_BYTES",
    "DEFAULT_MAX_EPRINT_BYTES",
    "EXTENSIONS",
    "HEAD_BYTES",
    "KINDS",
    "EprintFile",
    "cache_name",
    "capped_chunks",
    "describe_file",
    "detect_kind",
    "find_cached",
    "stream_to_partial",
]
