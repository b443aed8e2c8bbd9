"""What kind of e-print a file is, from its first bytes.

arXiv serves a paper's source as a gzipped tar (the usual case), a single gzipped
``.tex``, occasionally a plain tar or plain ``.tex``, or a PDF when the authors gave no
source. :func:`detect_kind` tells these apart from the head of the file (one of
:data:`KINDS`) without trusting any name or header size (:func:`detect` also returns the
decompressed start of a gzip stream); :func:`gzip_name` reads the
original file name a gzip header may store.
"""

from __future__ import annotations

import zlib

HEAD_BYTES = 64 * 1024  # how much of an e-print detection reads

KINDS = ("tar.gz", "gz", "pdf", "tar", "tex", "unknown")


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
    return int(stored, 8) == sum(block[:148]) + 8 * 0x20 + sum(block[156:512])


_LATEX_HINTS = ("\\documentclass", "\\documentstyle", "\\begin{document}")


def _looks_like_latex(head: bytes) -> bool:
    """Text that starts as TeX does (a command or a comment, PostScript's ``%!`` aside) or holds a preamble."""
    if b"\0" in head[:4096]:
        return False
    text = head[:4096].decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text or text.startswith("%!"):
        return False
    return text[0] in "\\%" or any(m in text for m in _LATEX_HINTS)


def detect(head: bytes) -> tuple[str, bytes]:
    """(kind, the decompressed start of a gzip stream or b""): see :func:`detect_kind`."""
    head = bytes(head)
    if head[:2] == b"\x1f\x8b":
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4096)
        except zlib.error:
            inner = b""
        return ("tar.gz" if _looks_like_tar(inner[:512]) else "gz"), inner
    if head.lstrip(b" \t\r\n")[:4] == b"%PDF":
        return "pdf", b""
    if _looks_like_tar(head[:512]):
        return "tar", b""
    if _looks_like_latex(head):
        return "tex", b""
    return "unknown", b""


def detect_kind(head: bytes) -> str:
    """Classify an e-print from its first bytes (give at least a few KiB; :data:`HEAD_BYTES`).

    ``"tar.gz"`` gzip whose decompressed start is a tar header; ``"gz"`` any other gzip (arXiv's
    form for a single gzipped .tex); ``"pdf"`` a PDF-only submission; ``"tar"`` an uncompressed
    tar; ``"tex"`` plain LaTeX text; ``"unknown"`` anything else (HTML error pages, PostScript,
    empty input). The one detector of the project: the downloader and the unpacker both use it.
    """
    return detect(head)[0]


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


__all__ = ["HEAD_BYTES", "KINDS", "detect", "detect_kind", "gzip_name"]
