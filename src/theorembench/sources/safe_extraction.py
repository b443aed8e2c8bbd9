"""The rules every extraction follows: limits, what it reports, and a writer that stays inside its folder.

* :class:`Limits` caps what an extraction may write, counted on the bytes actually read
  or decompressed, in chunks, never taken from headers: a per-file cap, a cap on the
  whole decompressed stream (which stops a gzip bomb after at most that many bytes) and
  a cap on the number of members;
* :class:`SafeWriter` writes files under one destination folder and nothing else: it
  never writes through a symbolic link, never leaves the folder, writes each file
  through a temporary file (mode 0644, no archive modes copied) and records a refused
  member as a :class:`Rejection`;
* :func:`safe_relpath` refuses member names that are absolute, contain ``..``, control
  characters or backslashes;
* :class:`CountingReader` counts the bytes a stream hands out and stops past the total cap;
* :class:`Extraction` is the result: the files written, the rejections, ``ok`` and an
  ``error``.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

MB = 1024 * 1024
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Caps on what an extraction may write, all counted on the actual bytes."""

    max_total_bytes: int = 200 * MB  # the whole decompressed stream (tar headers included)
    max_members: int = 5000  # archive members (files, folders, links...) examined
    max_file_bytes: int = 50 * MB  # one file


@dataclass(frozen=True)
class Rejection:
    member: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"member": self.member, "reason": self.reason}


@dataclass
class Extraction:
    kind: str  # one of eprint_kind.KINDS, or "folder" for extract_folder
    ok: bool
    error: str | None
    root: Path  # the destination folder
    files: list[str] = field(default_factory=list)  # relative POSIX paths written, in archive order
    rejected: list[Rejection] = field(default_factory=list)
    bytes_written: int = 0
    bytes_read: int = 0  # bytes of the (decompressed) stream read: at most the total cap plus one chunk

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "ok": self.ok,
            "error": self.error,
            "root": str(self.root),
            "files": list(self.files),
            "rejected": [r.to_dict() for r in self.rejected],
            "bytes_written": self.bytes_written,
            "bytes_read": self.bytes_read,
        }


# --------------------------------------------------------------------------- paths


def safe_relpath(name: str) -> tuple[str | None, str]:
    """(normalised relative POSIX path, "") or (None, reason for refusing the name)."""
    if not name:
        return None, "empty name"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return None, "control character in name"
    if "\\" in name:
        return None, "backslash in name"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return None, "absolute path"
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None, "'..' path component"
    if not parts:
        return "", ""
    if any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts):
        return None, "name component longer than 255 bytes"
    return "/".join(parts), ""


class Refused(Exception):
    """A member is refused; the message is the reason."""


class TotalExceeded(Exception):
    """The decompressed stream went over Limits.max_total_bytes."""


class StreamError(Exception):
    """Reading (decompressing) the e-print failed: it is corrupt or truncated."""


class SafeWriter:
    """Writes files under one destination folder, never outside it."""

    def __init__(self, dest: Path, limits: Limits, protect: Path | None = None) -> None:
        self.dest = dest
        self.real = dest.resolve()
        self.limits = limits
        self.protect = protect.resolve() if protect is not None else None
        self.files: list[str] = []
        self._seen: set[str] = set()
        self.rejected: list[Rejection] = []
        self.written = 0

    def reject(self, member: str, reason: str) -> None:
        self.rejected.append(Rejection(member, reason))

    def _parent(self, rel: str, created: list[Path] | None = None) -> Path:
        """Create rel's parent folders (noted in ``created``), refusing links and files in the way."""
        current = self.real
        for part in rel.split("/")[:-1]:
            current = current / part
            if current.is_symlink():
                raise Refused("path goes through a symbolic link")
            if current.exists():
                if not current.is_dir():
                    raise Refused("path conflict: a file is in the way of a folder")
            else:
                current.mkdir()
                if created is not None:
                    created.append(current)
        return current

    def mkdir(self, rel: str) -> None:
        if not rel:
            return
        target = self._parent(rel) / rel.split("/")[-1]
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            raise Refused("path conflict: a file or link is in the way of a folder")
        target.mkdir(exist_ok=True)

    def write(self, rel: str, chunks: Iterable[bytes]) -> None:
        """Write one file from chunks, counting bytes; raises Refused on a limit or a conflict."""
        if not rel:
            raise Refused("empty name")
        created: list[Path] = []
        tmp: Path | None = None
        size = 0
        try:
            parent = self._parent(rel, created)
            target = parent / rel.split("/")[-1]
            if target.is_symlink():
                raise Refused("a symbolic link is in the way")
            if target.exists() and not target.is_file():
                raise Refused("path conflict: a folder is in the way of a file")
            if not target.resolve().is_relative_to(self.real):  # belt and braces
                raise Refused("path leaves the destination folder")
            if self.protect is not None and target.resolve() == self.protect:
                raise Refused("would overwrite the e-print itself")
            fd, tmp_name = tempfile.mkstemp(prefix=".tb-partial-", dir=parent)
            tmp = Path(tmp_name)
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    size += len(chunk)
                    if size > self.limits.max_file_bytes:
                        raise Refused(f"file larger than the per-file limit of {self.limits.max_file_bytes} bytes")
                    if self.written + size > self.limits.max_total_bytes:
                        raise Refused(f"total size over the limit of {self.limits.max_total_bytes} bytes")
                    out.write(chunk)
            os.chmod(tmp, 0o644)  # mkstemp makes 0600; archive modes are never copied
            os.replace(tmp, target)
        except BaseException:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            for folder in reversed(created):  # leave no empty folders behind a refused file
                try:
                    folder.rmdir()
                except OSError:
                    break
            raise
        self.written += size
        if rel not in self._seen:
            self._seen.add(rel)
            self.files.append(rel)

    def result(self, kind: str, error: str | None = None) -> Extraction:
        if error is None and not self.files:
            reasons = "; ".join(f"{r.member}: {r.reason}" for r in self.rejected[:3])
            error = "no files were extracted" + (f" ({reasons})" if reasons else "")
        return Extraction(
            kind=kind,
            ok=error is None,
            error=error,
            root=self.dest,
            files=list(self.files),
            rejected=list(self.rejected),
            bytes_written=self.written,
        )


class CountingReader(io.RawIOBase):
    """A readable stream that counts the bytes it hands out and stops past a cap."""

    def __init__(self, raw: BinaryIO, cap: int) -> None:
        self.raw = raw
        self.cap = cap
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0 or n > CHUNK:
            n = CHUNK
        try:
            data = self.raw.read(n)
        except (OSError, EOFError, zlib.error) as e:
            raise StreamError(str(e) or e.__class__.__name__) from None
        self.count += len(data)
        if self.count > self.cap:
            raise TotalExceeded()
        return data

    def readinto(self, buffer) -> int:  # pragma: no cover - read() is what tarfile uses
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def read_chunks(stream: BinaryIO, size: int = CHUNK) -> Iterator[bytes]:
    """The stream's bytes in chunks of at most ``size``."""
    while True:
        data = stream.read(size)
        if not data:
            return
        yield data


__all__ = [
    "CHUNK", "MB", "CountingReader", "Extraction", "Limits", "Refused", "Rejection", "SafeWriter", "StreamError",
    "TotalExceeded", "read_chunks", "safe_relpath",
]  # fmt: skip
