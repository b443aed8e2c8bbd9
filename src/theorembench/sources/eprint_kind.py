"""What kind of e-print a file is, from its first bytes.

arXiv serves a paper's source as a gzipped tar (the usual case), a single gzipped
``.tex``, occasionally a plain tar or plain ``.tex``, or a PDF when the authors gave no
source. :func:`detect_kind` tells these apart from the head of the file (one of
:data:`KINDS`) without trusting any name or header size; :func:`gzip_name` reads the
original file name a gzip header may store.
"""

from __future__ import annotations

import re
import zlib

HEAD_BYTES = 64 * 1024  # how much of an e-print detection reads

KINDS = ("tar.gz", "gz", "pdf", "tar", "tex", "unknown")


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


def detect_kind(head: bytes) -> tuple[str, bytes]:
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


def gzip_name(head: bytes) -> str | None:
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


__all__ = ["HEAD_BYTES", "KINDS", "detect_kind", "gzip_name"]
