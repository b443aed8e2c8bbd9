"""Decoding LaTeX source bytes: UTF-8 first, then the encoding the file declares, then legacy fallbacks."""

from __future__ import annotations

import codecs
import re

_INPUTENC = re.compile(rb"\\usepackage\s*\[([^\]]{1,80})\]\s*\{inputenc\}")
_INPUTENC_CODECS = {
    "latin1": "latin-1",
    "latin9": "iso8859-15",
    "latin2": "iso8859-2",
    "latin3": "iso8859-3",
    "latin4": "iso8859-4",
    "latin5": "iso8859-9",
    "latin10": "iso8859-16",
    "ansinew": "cp1252",
    "cp1252": "cp1252",
    "cp1250": "cp1250",
    "cp1251": "cp1251",
    "cp1257": "cp1257",
    "cp437": "cp437",
    "cp850": "cp850",
    "cp852": "cp852",
    "cp866": "cp866",
    "applemac": "mac_roman",
    "macce": "mac_latin2",
    "koi8-r": "koi8_r",
    "koi8-u": "koi8_u",
    "next": "latin-1",
}


def decode_tex(data: bytes) -> tuple[str, str]:
    """Decode a LaTeX source file; returns (text, name of the encoding used).

    UTF-8 first ("utf-8", or "utf-8-sig" when a byte-order mark is dropped;
    "utf-16" for a UTF-16 mark); otherwise the encoding named by
    ``\\usepackage[...]{inputenc}`` in the file, then "cp1252", then "latin-1",
    which decodes anything.
    """
    data = bytes(data)
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data[len(codecs.BOM_UTF8) :].decode("utf-8"), "utf-8-sig"
        except UnicodeDecodeError:
            data = data[len(codecs.BOM_UTF8) :]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    chain: list[str] = []
    m = _INPUTENC.search(data)
    if m:
        for option in m.group(1).decode("ascii", "replace").split(","):
            codec = _INPUTENC_CODECS.get(option.strip().lower())
            if codec and codec not in chain:
                chain.append(codec)
    for codec in ("cp1252", "latin-1"):
        if codec not in chain:
            chain.append(codec)
    for codec in chain:
        try:
            return data.decode(codec), codec
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1"), "latin-1"  # not reached: latin-1 maps every byte
