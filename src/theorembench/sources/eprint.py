"""Safe unpacking of an arXiv e-print (or a local source folder) into a paper's folder.

An e-print is whatever arXiv serves as a paper's source: a gzipped tar (the usual
case), a single gzipped ``.tex``, occasionally a plain tar or plain ``.tex``, or a
PDF when the authors gave no source. :func:`extract_eprint` unpacks it into the
paper's own folder and nothing else:

* member names that are absolute or contain ``..`` are refused, and so are
  symbolic links, hard links, device nodes and FIFOs; nothing is written
  through a symbolic link that already sits in the destination;
* sizes are counted on the bytes actually decompressed, in chunks, never taken
  from headers: a per-file cap, a cap on the whole decompressed stream (which
  stops a gzip bomb after at most that many bytes) and a cap on the number of
  members (see :class:`Limits`);
* a refused member is recorded as a :class:`Rejection` and the rest goes on; a
  bad e-print (corrupt archive, PDF only, unknown format) gives an
  :class:`Extraction` with ``ok=False`` and an ``error``, never an exception.

Files are written byte for byte (no decoding); :func:`theorembench.latex.encoding.decode_tex` turns their
bytes into text when they are read (UTF-8, else the encoding the file declares to
``inputenc``, else cp1252, else latin-1, recording which).
:func:`extract_folder` copies a local source folder under the same rules.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import tarfile
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

MB = 1024 * 1024
CHUNK = 1024 * 1024
HEAD_BYTES = 64 * 1024

KINDS = ("tar.gz", "gz", "pdf", "tar", "tex", "unknown")
VCS_DIRS = {".git", ".hg", ".svn", ".bzr", "CVS"}


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
    kind: str  # one of KINDS, or "folder" for extract_folder
    ok: bool
    error: str | None
    root: Path  # the destination folder
    files: list[str] = field(default_factory=list)  # relative POSIX paths written, in archive order
    rejected: list[Rejection] = field(default_factory=list)
    bytes_written: int = 0

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "ok": self.ok,
            "error": self.error,
            "root": str(self.root),
            "files": list(self.files),
            "rejected": [r.to_dict() for r in self.rejected],
            "bytes_written": self.bytes_written,
        }


# --------------------------------------------------------------------------- decoding

# --------------------------------------------------------------------------- kind detection


def _looks_like_tar(block: bytes) -> bool:
    """A tar header: ustar magic, or (old v7 tars) a valid header checksum."""
    if len(block) < 512:
        return False
    if block[257:262] == b"ustar":
        return True
    field_ = block[148:156].replace(b"\x00", b" ").strip()
    if not field_ or not all(48 <= c <= 55 for c in field_):
        return False
    stored = int(field_, 8)
    header = block[:148] + b" " * 8 + block[156:512]
    return stored == sum(header) and block[0] != 0


_LATEX_HINT = re.compile(rb"\\(documentclass|documentstyle|begin|input|section|def|newcommand|title|usepackage)\b")


def _detect(head: bytes) -> tuple[str, bytes]:
    """(kind, decompressed start of a gzip stream or b"")."""
    if head[:2] == b"\x1f\x8b":
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4096)
        except zlib.error:
            inner = b""
        return ("tar.gz" if _looks_like_tar(inner[:512]) else "gz"), inner
    if head.lstrip(b" \t\r\n")[:5] == b"%PDF-":
        return "pdf", b""
    if _looks_like_tar(head[:512]):
        return "tar", b""
    sample = head[:8192]
    if sample and b"\x00" not in sample and not sample.lstrip().startswith((b"<", b"%!PS")):
        if _LATEX_HINT.search(sample) or sample.lstrip().startswith(b"%"):
            return "tex", b""
    return "unknown", b""


def _gzip_name(head: bytes) -> str | None:
    """The original file name stored in a gzip header (FNAME), if any."""
    if len(head) < 10 or head[:2] != b"\x1f\x8b":
        return None
    flags = head[3]
    pos = 10
    if flags & 0x04:  # FEXTRA
        if len(head) < pos + 2:
            return None
        pos += 2 + int.from_bytes(head[pos : pos + 2], "little")
    if not flags & 0x08:  # FNAME
        return None
    end = head.find(b"\x00", pos)
    if end < 0:
        return None
    return head[pos:end].decode("latin-1")


# --------------------------------------------------------------------------- paths


def _safe_relpath(name: str) -> tuple[str | None, str]:
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


class _Refused(Exception):
    """A member is refused; the message is the reason."""


class _TotalExceeded(Exception):
    """The decompressed stream went over Limits.max_total_bytes."""


class _StreamError(Exception):
    """Reading (decompressing) the e-print failed: it is corrupt or truncated."""


class _Writer:
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
                raise _Refused("path goes through a symbolic link")
            if current.exists():
                if not current.is_dir():
                    raise _Refused("path conflict: a file is in the way of a folder")
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
            raise _Refused("path conflict: a file or link is in the way of a folder")
        target.mkdir(exist_ok=True)

    def write(self, rel: str, chunks: Iterable[bytes]) -> None:
        """Write one file from chunks, counting bytes; raises _Refused on a limit or a conflict."""
        if not rel:
            raise _Refused("empty name")
        created: list[Path] = []
        tmp: Path | None = None
        size = 0
        try:
            parent = self._parent(rel, created)
            target = parent / rel.split("/")[-1]
            if target.is_symlink():
                raise _Refused("a symbolic link is in the way")
            if target.exists() and not target.is_file():
                raise _Refused("path conflict: a folder is in the way of a file")
            if not target.resolve().is_relative_to(self.real):  # belt and braces
                raise _Refused("path leaves the destination folder")
            if self.protect is not None and target.resolve() == self.protect:
                raise _Refused("would overwrite the e-print itself")
            fd, tmp_name = tempfile.mkstemp(prefix=".tb-partial-", dir=parent)
            tmp = Path(tmp_name)
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    size += len(chunk)
                    if size > self.limits.max_file_bytes:
                        raise _Refused(f"file larger than the per-file limit of {self.limits.max_file_bytes} bytes")
                    if self.written + size > self.limits.max_total_bytes:
                        raise _Refused(f"total size over the limit of {self.limits.max_total_bytes} bytes")
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


class _Counting(io.RawIOBase):
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
            raise _StreamError(str(e) or e.__class__.__name__) from None
        self.count += len(data)
        if self.count > self.cap:
            raise _TotalExceeded()
        return data

    def readinto(self, buffer) -> int:  # pragma: no cover - read() is what tarfile uses
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _chunks(stream: BinaryIO, size: int = CHUNK) -> Iterator[bytes]:
    while True:
        data = stream.read(size)
        if not data:
            return
        yield data


# --------------------------------------------------------------------------- e-prints


def extract_eprint(source: Path | bytes, dest: Path, *, limits: Limits = Limits()) -> Extraction:
    """Unpack an e-print (a file, or its bytes) into ``dest``; see the module docstring.

    A local folder given as ``source`` is copied with :func:`extract_folder`.
    """
    dest = Path(dest)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _extract_stream(lambda: io.BytesIO(bytes(source)), dest, limits, None)
    path = Path(source)
    if path.is_dir():
        return extract_folder(path, dest, limits)
    if not path.is_file():
        return Extraction("unknown", False, f"e-print not found: {path}", dest)
    return _extract_stream(lambda: open(path, "rb"), dest, limits, path)


def _extract_stream(opener, dest: Path, limits: Limits, source_path: Path | None) -> Extraction:
    try:
        with opener() as f:
            head = f.read(HEAD_BYTES)
    except OSError as e:
        return Extraction("unknown", False, f"cannot read the e-print: {e}", dest)
    kind, inner = _detect(head)
    if kind == "pdf":
        return Extraction(kind, False, "the e-print is a PDF only: no LaTeX source to extract", dest)
    if kind == "unknown":
        what = "empty file" if not head else f"first bytes {head[:16]!r}"
        return Extraction(kind, False, f"unrecognised e-print format ({what})", dest)
    if kind == "gz" and inner.lstrip()[:5] == b"%PDF-":
        return Extraction(kind, False, "the e-print is a gzipped PDF: no LaTeX source to extract", dest)
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return Extraction(kind, False, f"cannot create the destination folder: {e}", dest)
    writer = _Writer(dest, limits, protect=source_path)
    try:
        with opener() as f:
            if kind in ("tar.gz", "tar"):
                raw: BinaryIO = gzip.GzipFile(fileobj=f, mode="rb") if kind == "tar.gz" else f
                return _extract_tar(_Counting(raw, limits.max_total_bytes), writer, kind)
            if kind == "gz":
                name = _single_name(_gzip_name(head))
                stream = _Counting(gzip.GzipFile(fileobj=f, mode="rb"), limits.max_total_bytes)
            else:
                name = "main.tex"
                stream = _Counting(f, limits.max_total_bytes)
            try:
                writer.write(name, _chunks(stream))
            except _Refused as e:
                writer.reject(name, str(e))
            except _TotalExceeded:
                writer.reject(name, f"decompressed size over the total limit of {limits.max_total_bytes} bytes")
            except OSError as e:
                writer.reject(name, f"cannot write: {e.strerror or e}")
            return writer.result(kind)
    except (_StreamError, OSError, EOFError, zlib.error, tarfile.TarError) as e:
        return writer.result(kind, error=f"corrupt or truncated {kind} e-print: {e}")


def _single_name(stored: str | None) -> str:
    """The name for a single gzipped file: the stored one when it is a safe .tex name."""
    if stored and "/" not in stored:  # a plain name; anything with a folder in it is not used
        rel, _ = _safe_relpath(stored)
        if rel and rel == stored and not stored.startswith(".") and stored.lower().endswith(".tex"):
            return stored
    return "main.tex"


def _extract_tar(stream: _Counting, writer: _Writer, kind: str) -> Extraction:
    limits = writer.limits
    count = 0
    current = "(archive)"
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tf:
            for member in tf:
                current = member.name
                count += 1
                if count > limits.max_members:
                    writer.reject(
                        member.name, f"too many members (limit {limits.max_members}); this and later members skipped"
                    )
                    break
                rel, why = _safe_relpath(member.name)
                if rel is None:
                    writer.reject(member.name, why)
                    continue
                reason = _member_type_problem(member)
                if reason:
                    writer.reject(member.name, reason)
                    continue
                try:
                    if member.isdir():
                        writer.mkdir(rel)
                        continue
                    if member.size > limits.max_file_bytes:
                        raise _Refused(f"file larger than the per-file limit of {limits.max_file_bytes} bytes")
                    data = tf.extractfile(member)
                    if data is None:
                        raise _Refused("no data")
                    writer.write(rel, _chunks(data))
                except _Refused as e:
                    writer.reject(member.name, str(e))
                except OSError as e:
                    writer.reject(member.name, f"cannot write: {e.strerror or e}")
                current = "(archive)"
    except _TotalExceeded:
        writer.reject(
            current,
            f"decompressed size over the total limit of {limits.max_total_bytes} bytes; extraction stopped here",
        )
    except (tarfile.ReadError, _StreamError) as e:
        if count == 0:
            return writer.result(kind, error=f"not a readable {kind} archive: {e}")
        return writer.result(kind, error=f"corrupt or truncated {kind} archive after {count} members: {e}")
    return writer.result(kind)


def _member_type_problem(member: tarfile.TarInfo) -> str:
    if member.issym():
        return f"symbolic link (to {member.linkname!r}) refused"
    if member.islnk():
        return f"hard link (to {member.linkname!r}) refused"
    if member.ischr() or member.isblk():
        return "device node refused"
    if member.isfifo():
        return "FIFO refused"
    if not (member.isreg() or member.isdir()):
        return f"unsupported member type {member.type!r}"
    return ""


# --------------------------------------------------------------------------- folders


def extract_folder(src: Path, dest: Path, limits: Limits = Limits()) -> Extraction:
    """Copy a local LaTeX source folder into ``dest`` under the same rules as an e-print.

    Symbolic links and special files are refused, version-control folders
    (``.git`` ...) skipped, and the same size and count limits apply, counted on
    the bytes read. ``dest`` may not be ``src`` itself; a ``dest`` inside ``src``
    is not copied into itself.
    """
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        return Extraction("folder", False, f"not a folder: {src}", dest)
    src_real = src.resolve()
    dest_real = dest.resolve()
    if src_real == dest_real:
        return Extraction("folder", False, "source and destination are the same folder", dest)
    if src_real.is_relative_to(dest_real):
        return Extraction("folder", False, "the source folder lies inside the destination", dest)
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return Extraction("folder", False, f"cannot create the destination folder: {e}", dest)
    writer = _Writer(dest, limits)
    count = 0
    stack: list[tuple[Path, str]] = [(src_real, "")]
    stopped = False
    while stack and not stopped:
        folder, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as e:
            writer.reject(prefix or ".", f"cannot list folder: {e.strerror or e}")
            continue
        subfolders: list[tuple[Path, str]] = []
        for entry in entries:
            name = prefix + entry.name
            if Path(entry.path).resolve() == dest_real:
                continue  # the destination sits inside the source
            count += 1
            if count > limits.max_members:
                writer.reject(name, f"too many entries (limit {limits.max_members}); this and later entries skipped")
                stopped = True
                break
            rel, why = _safe_relpath(name)
            if rel is None:
                writer.reject(name, why)
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as e:
                writer.reject(name, f"cannot stat: {e.strerror or e}")
                continue
            if stat.S_ISLNK(st.st_mode):
                writer.reject(name, "symbolic link refused")
            elif stat.S_ISDIR(st.st_mode):
                if entry.name in VCS_DIRS:
                    writer.reject(name, "version-control folder skipped")
                    continue
                try:
                    writer.mkdir(rel)
                except _Refused as e:
                    writer.reject(name, str(e))
                    continue
                subfolders.append((Path(entry.path), name + "/"))
            elif stat.S_ISREG(st.st_mode):
                try:
                    if st.st_size > limits.max_file_bytes:
                        raise _Refused(f"file larger than the per-file limit of {limits.max_file_bytes} bytes")
                    with open(entry.path, "rb") as f:
                        writer.write(rel, _chunks(f))
                except _Refused as e:
                    writer.reject(name, str(e))
                except OSError as e:
                    writer.reject(name, f"cannot copy: {e.strerror or e}")
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                writer.reject(name, "device node refused")
            elif stat.S_ISFIFO(st.st_mode):
                writer.reject(name, "FIFO refused")
            else:
                writer.reject(name, "special file refused")
        stack.extend(reversed(subfolders))
    return writer.result("folder")
