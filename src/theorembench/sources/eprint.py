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

This module holds the unpacking of the archive itself (tar members, a single gzipped
file). The kind detection is in :mod:`~theorembench.sources.eprint_kind`, the limits,
result types and the writer that stays inside the destination in
:mod:`~theorembench.sources.safe_extraction`, the folder copy in
:mod:`~theorembench.sources.folder_copy`; :class:`Limits`, :class:`Rejection`,
:class:`Extraction` and :func:`extract_folder` are importable from here too.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from pathlib import Path
from typing import BinaryIO

from theorembench.sources.eprint_kind import HEAD_BYTES, KINDS, detect, gzip_name
from theorembench.sources.folder_copy import extract_folder
from theorembench.sources.safe_extraction import (
    CountingReader,
    Extraction,
    Limits,
    Refused,
    Rejection,
    SafeWriter,
    StreamError,
    TotalExceeded,
    read_chunks,
    safe_relpath,
)

__all__ = ["KINDS", "Extraction", "Limits", "Rejection", "extract_eprint", "extract_folder"]


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
    kind, inner = detect(head)
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
    writer = SafeWriter(dest, limits, protect=source_path)
    streams: list[CountingReader] = []
    result = _unpack(opener, head, kind, writer, limits, streams)
    result.bytes_read = streams[0].count if streams else 0
    return result


def _unpack(opener, head: bytes, kind: str, writer: SafeWriter, limits: Limits,
            streams: list[CountingReader]) -> Extraction:  # fmt: skip
    """Unpack an e-print of a known kind; the counting stream it reads is left in ``streams``."""
    try:
        with opener() as f:
            if kind in ("tar.gz", "tar"):
                raw: BinaryIO = gzip.GzipFile(fileobj=f, mode="rb") if kind == "tar.gz" else f
                streams.append(CountingReader(raw, limits.max_total_bytes))
                return _extract_tar(streams[0], writer, kind)
            if kind == "gz":
                name = _single_name(gzip_name(head))
                stream = CountingReader(gzip.GzipFile(fileobj=f, mode="rb"), limits.max_total_bytes)
            else:
                name = "main.tex"
                stream = CountingReader(f, limits.max_total_bytes)
            streams.append(stream)
            try:
                writer.write(name, read_chunks(stream))
            except Refused as e:
                writer.reject(name, str(e))
            except TotalExceeded:
                writer.reject(name, f"decompressed size over the total limit of {limits.max_total_bytes} bytes")
            except OSError as e:
                writer.reject(name, f"cannot write: {e.strerror or e}")
            return writer.result(kind)
    except (StreamError, OSError, EOFError, zlib.error, tarfile.TarError) as e:
        return writer.result(kind, error=f"corrupt or truncated {kind} e-print: {e}")


def _single_name(stored: str | None) -> str:
    """The name for a single gzipped file: the stored one when it is a safe .tex name."""
    if stored and "/" not in stored:  # a plain name; anything with a folder in it is not used
        rel, _ = safe_relpath(stored)
        if rel and rel == stored and not stored.startswith(".") and stored.lower().endswith(".tex"):
            return stored
    return "main.tex"


def _extract_tar(stream: CountingReader, writer: SafeWriter, kind: str) -> Extraction:
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
                rel, why = safe_relpath(member.name)
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
                        raise Refused(f"file larger than the per-file limit of {limits.max_file_bytes} bytes")
                    data = tf.extractfile(member)
                    if data is None:
                        raise Refused("no data")
                    writer.write(rel, read_chunks(data))
                except Refused as e:
                    writer.reject(member.name, str(e))
                except OSError as e:
                    writer.reject(member.name, f"cannot write: {e.strerror or e}")
                current = "(archive)"
    except TotalExceeded:
        writer.reject(
            current,
            f"decompressed size over the total limit of {limits.max_total_bytes} bytes; extraction stopped here",
        )
    except (tarfile.ReadError, StreamError) as e:
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
