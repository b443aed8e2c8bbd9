"""Safe e-print extraction: the six real papers, and crafted hostile archives."""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import zlib
from pathlib import Path

import pytest
from helpers.paths import SHARED

from theorembench.latex.encoding import decode_tex
from theorembench.sources.eprint import Extraction, Limits, extract_eprint, extract_folder

PAPERS = SHARED / "data" / "papers"


def manifest() -> list[dict]:
    path = PAPERS / "manifest.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text())


MANIFEST = manifest()
needs_papers = pytest.mark.skipif(not MANIFEST, reason=f"shared papers not found at {PAPERS}")


def tree(folder: Path) -> set[str]:
    """Every path (files, folders, links) under folder, relative, POSIX."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            out.add(Path(dirpath, name).relative_to(folder).as_posix())
    return out


def files_under(folder: Path) -> set[str]:
    return {p for p in tree(folder) if (folder / p).is_file() and not (folder / p).is_symlink()}


# --------------------------------------------------------------------------- building archives


def member(name: str, data: bytes = b"", **attrs) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    for key, value in attrs.items():
        setattr(info, key, value)
    return info, data if info.isreg() else None


def make_tar(members: list[tuple[tarfile.TarInfo, bytes | None]], *, gz: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


class Zeros(io.RawIOBase):
    """n zero bytes, read in chunks, never held in memory at once."""

    def __init__(self, n: int) -> None:
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        k = min(len(b), self.left)
        b[:k] = bytes(k)
        self.left -= k
        return k


def zeros_member(name: str, n: int) -> tuple[tarfile.TarInfo, Zeros]:
    info = tarfile.TarInfo(name)
    info.size = n
    return info, Zeros(n)


def reasons(result: Extraction) -> dict[str, str]:
    return {r.member: r.reason for r in result.rejected}


# --------------------------------------------------------------------------- real papers


@needs_papers
@pytest.mark.parametrize("paper", [m["short_name"] for m in MANIFEST] or ["none"])
def test_real_eprint_extracts_exactly_the_manifest_files(paper: str, tmp_path: Path):
    entry = next(m for m in MANIFEST if m["short_name"] == paper)
    dest = tmp_path / "paper" / "src"
    result = extract_eprint(PAPERS / paper / "eprint.tar.gz", dest)
    assert result.ok, result.error
    assert result.kind == "tar.gz"
    assert result.rejected == []
    assert sorted(result.files) == sorted(entry["files"])
    assert files_under(dest) == set(entry["files"])  # nothing else written, no partial files left
    for rel in entry["files"]:
        assert (dest / rel).read_bytes() == (PAPERS / paper / "src" / rel).read_bytes(), rel
    assert json.loads(json.dumps(result.to_dict()))["files"] == result.files


@needs_papers
def test_single_gzipped_tex_becomes_one_file(tmp_path: Path):
    source = PAPERS / "tao-factorial" / "eprint.gz"
    original = (PAPERS / "tao-factorial" / "src" / "erdos-391_improv.tex").read_bytes()
    for given in (source, source.read_bytes()):  # a path or the bytes
        dest = tmp_path / ("from-bytes" if isinstance(given, bytes) else "from-path")
        result = extract_eprint(given, dest)
        assert result.ok and result.kind == "gz"
        assert len(result.files) == 1 and result.files[0].endswith(".tex")
        assert files_under(dest) == set(result.files)
        assert (dest / result.files[0]).read_bytes() == original


@needs_papers
def test_real_source_folder_copies_like_the_eprint(tmp_path: Path):
    entry = next(m for m in MANIFEST if m["short_name"] == "sag-projective")
    result = extract_folder(PAPERS / "sag-projective" / "src", tmp_path / "copy")
    assert result.ok and result.kind == "folder"
    assert sorted(result.files) == sorted(entry["files"])
    for rel in entry["files"]:
        assert (tmp_path / "copy" / rel).read_bytes() == (PAPERS / "sag-projective" / "src" / rel).read_bytes()


@needs_papers
def test_truncated_eprint_is_a_clear_error(tmp_path: Path):
    data = (PAPERS / "carleson-blueprint" / "eprint.tar.gz").read_bytes()
    result = extract_eprint(data[: len(data) // 2], tmp_path / "dest")
    assert not result.ok
    assert "truncated" in result.error or "corrupt" in result.error
    assert not any(".tb-partial" in p for p in tree(tmp_path / "dest"))


# --------------------------------------------------------------------------- hostile archives


def test_hostile_members_are_refused_and_the_rest_extracted(tmp_path: Path):
    big = b"x" * 5000
    archive = make_tar(
        [
            member("good.tex", b"\\documentclass{article}\n"),
            member("../evil.tex", b"evil"),
            member("/abs.tex", b"absolute"),
            member("sub/../../escape.tex", b"escape"),
            member("link.tex", type=tarfile.SYMTYPE, linkname="/etc/passwd"),
            member("hard.tex", type=tarfile.LNKTYPE, linkname="good.tex"),
            member("dev", type=tarfile.CHRTYPE, devmajor=1, devminor=3),
            member("fifo", type=tarfile.FIFOTYPE),
            member("big.tex", big),
            member("deep/er/big.tex", big),
            member("./sections/./intro.tex", b"intro"),
            member("sections/last.tex", b"last"),
        ]
    )
    dest = tmp_path / "a" / "b" / "dest"
    result = extract_eprint(archive, dest, limits=Limits(max_file_bytes=1000))
    assert result.ok, result.error
    assert result.files == ["good.tex", "sections/intro.tex", "sections/last.tex"]
    why = reasons(result)
    assert "'..'" in why["../evil.tex"]
    assert "absolute" in why["/abs.tex"]
    assert "'..'" in why["sub/../../escape.tex"]
    assert "symbolic link" in why["link.tex"]
    assert "hard link" in why["hard.tex"]
    assert "device" in why["dev"]
    assert "FIFO" in why["fifo"]
    assert "per-file limit" in why["big.tex"] and "per-file limit" in why["deep/er/big.tex"]
    assert len(why) == 9
    # the filesystem: only the three files (and their folder) exist, inside dest, nothing beside it
    assert tree(tmp_path) == {
        "a", "a/b", "a/b/dest", "a/b/dest/good.tex", "a/b/dest/sections",
        "a/b/dest/sections/intro.tex", "a/b/dest/sections/last.tex",
    }  # fmt: skip
    assert not Path("/abs.tex").exists()
    assert (dest / "sections" / "last.tex").read_bytes() == b"last"


def test_existing_symlink_in_dest_is_never_followed(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "figs").symlink_to(outside, target_is_directory=True)
    (dest / "name.tex").symlink_to(outside / "target.tex")
    archive = make_tar([member("figs/a.tex", b"through a link"), member("name.tex", b"over a link"), member("ok.tex")])
    result = extract_eprint(archive, dest)
    assert result.files == ["ok.tex"]
    assert "symbolic link" in reasons(result)["figs/a.tex"]
    assert "link" in reasons(result)["name.tex"]
    assert list(outside.iterdir()) == []


def test_too_many_members(tmp_path: Path):
    archive = make_tar([member(f"f{i}.tex", b"x") for i in range(8)])
    result = extract_eprint(archive, tmp_path / "dest", limits=Limits(max_members=5))
    assert result.ok
    assert result.files == [f"f{i}.tex" for i in range(5)]
    assert len(result.rejected) == 1
    assert result.rejected[0].member == "f5.tex" and "too many members" in result.rejected[0].reason
    assert files_under(tmp_path / "dest") == {f"f{i}.tex" for i in range(5)}


def test_gzip_bomb_stops_at_the_total_cap(tmp_path: Path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for info, data in [member("paper.tex", b"\\documentclass{article}"), member("refs.bib", b"@book{x}")]:
            tf.addfile(info, io.BytesIO(data))
        tf.addfile(*zeros_member("bomb.dat", 40 * 1024 * 1024))
    archive = buf.getvalue()
    assert len(archive) < 1024 * 1024  # highly compressible: 40 MiB in well under 1 MiB
    dest = tmp_path / "dest"
    result = extract_eprint(archive, dest, limits=Limits(max_total_bytes=2 * 1024 * 1024))
    # the extractor stops reading at its cap: at most one 1 MiB chunk past 2 MiB of the 40 MiB bomb is read
    assert 2 * 1024 * 1024 < result.bytes_read <= 3 * 1024 * 1024
    assert result.ok
    assert result.files == ["paper.tex", "refs.bib"]
    assert "total limit" in reasons(result)["bomb.dat"]
    assert files_under(dest) == {"paper.tex", "refs.bib"}  # no partial bomb left behind
    assert result.bytes_written < 1024


def test_gzip_bomb_single_file_ignores_the_size_in_the_trailer(tmp_path: Path):
    """A gzipped single file of 60 MiB of zeros whose trailer claims 10 bytes: refused at the default cap."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", filename="") as gz:
        chunk = bytes(1024 * 1024)
        for _ in range(60):
            gz.write(chunk)
    data = bytearray(buf.getvalue())
    data[-4:] = (10).to_bytes(4, "little")  # lie about the uncompressed size
    result = extract_eprint(bytes(data), tmp_path / "dest")
    assert result.kind == "gz"
    assert not result.ok and "no files" in result.error
    assert "per-file limit" in reasons(result)["main.tex"]
    assert result.bytes_read <= 51 * 1024 * 1024  # stopped at the 50 MiB per-file cap, not after all 60 MiB
    assert tree(tmp_path / "dest") == set()


def test_member_at_the_per_file_cap_is_kept_and_one_byte_more_refused(tmp_path: Path):
    archive = make_tar([member("exact.tex", b"a" * 100), member("over.tex", b"a" * 101)])
    result = extract_eprint(archive, tmp_path / "dest", limits=Limits(max_file_bytes=100))
    assert result.files == ["exact.tex"]
    assert list(reasons(result)) == ["over.tex"]


def test_pdf_only_eprint(tmp_path: Path):
    result = extract_eprint(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", tmp_path / "dest")
    assert result.kind == "pdf" and not result.ok
    assert "PDF" in result.error
    assert not (tmp_path / "dest").exists()


def test_corrupt_gzip_is_a_clear_error(tmp_path: Path):
    result = extract_eprint(b"\x1f\x8b\x08\x00" + bytes(range(200)), tmp_path / "dest")
    assert not result.ok
    assert result.kind in ("gz", "tar.gz")
    assert "corrupt" in result.error
    good = make_tar([member("a.tex", b"hello " * 2000)])
    broken = good[:20] + bytes(b ^ 0x55 for b in good[20:60]) + good[60:]
    result = extract_eprint(broken, tmp_path / "dest2")
    assert not result.ok and ("corrupt" in result.error or "readable" in result.error)


def test_unknown_format(tmp_path: Path):
    result = extract_eprint(b"<html><body>Not found</body></html>", tmp_path / "dest")
    assert result.kind == "unknown" and not result.ok and "unrecognised" in result.error
    assert extract_eprint(b"", tmp_path / "d2").ok is False


def test_plain_tar_and_plain_tex(tmp_path: Path):
    result = extract_eprint(make_tar([member("m.tex", b"\\documentclass{article}")], gz=False), tmp_path / "t")
    assert result.kind == "tar" and result.files == ["m.tex"]
    result = extract_eprint(b"\\documentclass{article}\n\\begin{document}x\\end{document}\n", tmp_path / "p")
    assert result.kind == "tex" and result.files == ["main.tex"]


def gzip_named(name: bytes, body: bytes) -> bytes:
    """A gzip stream whose header stores ``name`` verbatim (the gzip module keeps only a basename)."""
    flags = 0x08 if name else 0
    header = b"\x1f\x8b\x08" + bytes([flags]) + bytes(4) + b"\x00\x03" + (name + b"\x00" if name else b"")
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw = deflate.compress(body) + deflate.flush()
    trailer = zlib.crc32(body).to_bytes(4, "little") + len(body).to_bytes(4, "little")
    return header + raw + trailer


def test_gzip_header_name_is_used_only_when_safe(tmp_path: Path):
    body = b"\\documentclass{article}\n"
    cases = [
        (b"paper.tex", "paper.tex"), (b"../up.tex", "main.tex"), (b"/etc/x.tex", "main.tex"),
        (b"notes.txt", "main.tex"), (b"", "main.tex"),
    ]  # fmt: skip
    for k, (stored, expected) in enumerate(cases):
        assert gzip.decompress(gzip_named(stored, body)) == body
        dest = tmp_path / f"case{k}"
        result = extract_eprint(gzip_named(stored, body), dest)
        assert result.kind == "gz" and result.files == [expected], stored
        assert files_under(dest) == {expected}


def test_duplicate_names_and_conflicts(tmp_path: Path):
    archive = make_tar(
        [
            member("a.tex", b"first"),
            member("a.tex", b"second"),
            member("x", b"a file"),
            member("x/y.tex", b"under a file"),
            member("d", type=tarfile.DIRTYPE),
            member("d/e.tex", b"fine"),
        ]
    )
    result = extract_eprint(archive, tmp_path / "dest")
    assert result.files == ["a.tex", "x", "d/e.tex"]
    assert (tmp_path / "dest" / "a.tex").read_bytes() == b"second"
    assert "conflict" in reasons(result)["x/y.tex"]


def test_eprint_cannot_overwrite_itself(tmp_path: Path):
    dest = tmp_path / "paper"
    dest.mkdir()
    source = dest / "eprint.tar.gz"
    source.write_bytes(make_tar([member("eprint.tar.gz", b"overwrite!"), member("main.tex", b"ok")]))
    before = source.read_bytes()
    result = extract_eprint(source, dest)
    assert result.files == ["main.tex"]
    assert "itself" in reasons(result)["eprint.tar.gz"]
    assert source.read_bytes() == before


# --------------------------------------------------------------------------- folders


def test_extract_folder_refuses_links_and_special_files(tmp_path: Path):
    src = tmp_path / "src"
    (src / "sections").mkdir(parents=True)
    (src / ".git").mkdir()
    (src / ".git" / "config").write_text("[core]")
    (src / "main.tex").write_text("\\documentclass{article}")
    (src / "sections" / "intro.tex").write_text("Intro")
    (src / "big.tex").write_bytes(b"x" * 2000)
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (src / "leak.tex").symlink_to(secret)
    os.mkfifo(src / "pipe")
    dest = tmp_path / "dest"
    result = extract_folder(src, dest, Limits(max_file_bytes=1000))
    assert result.ok
    assert sorted(result.files) == ["main.tex", "sections/intro.tex"]
    why = reasons(result)
    assert "symbolic link" in why["leak.tex"]
    assert "FIFO" in why["pipe"]
    assert "per-file limit" in why["big.tex"]
    assert "version-control" in why[".git"]
    assert files_under(dest) == {"main.tex", "sections/intro.tex"}
    assert not extract_folder(src, src).ok  # never into itself


# --------------------------------------------------------------------------- decoding


def test_decode_tex_utf8_and_fallbacks():
    assert decode_tex("Théorème".encode()) == ("Théorème", "utf-8")
    assert decode_tex(b"\xef\xbb\xbf" + "Lemme".encode()) == ("Lemme", "utf-8-sig")
    latin1 = "Théorème de Gödel".encode("latin-1")
    text, encoding = decode_tex(latin1)
    assert text == "Théorème de Gödel" and encoding == "cp1252"  # the first fallback
    declared = b"\\usepackage[latin1]{inputenc}\n" + latin1
    text, encoding = decode_tex(declared)
    assert encoding == "latin-1" and text.endswith("Théorème de Gödel")
    text, encoding = decode_tex(b"\x93quoted\x94 and \x81")  # 0x81 is undefined in cp1252
    assert encoding == "latin-1" and text.startswith("\x93quoted")
    assert decode_tex(b"\x93smart\x94") == ("\u201csmart\u201d", "cp1252")


def test_latin1_file_extracts_byte_identical_and_decodes(tmp_path: Path):
    raw = "\\documentclass{article}\n% café\nÉtude".encode("latin-1")
    result = extract_eprint(make_tar([member("main.tex", raw)]), tmp_path / "dest")
    data = (tmp_path / "dest" / "main.tex").read_bytes()
    assert data == raw
    text, encoding = decode_tex(data)
    assert encoding != "utf-8" and "Étude" in text
    assert result.to_dict()["rejected"] == []


def test_the_downloader_and_the_unpacker_classify_alike(tmp_path: Path):
    from theorembench.sources.arxiv_eprints import describe_file

    heads = {b"%PDF1.4\n1 0 obj\n": "pdf", b"\\maketitle\n\\section{Intro}\n": "tex", b"%!PS-Adobe-3.0\n": "unknown",
             b"% a comment\n\\input{main}\n": "tex", b"<html>rate limited</html>": "unknown"}  # fmt: skip
    for i, (head, kind) in enumerate(heads.items()):
        path = tmp_path / f"e{i}"
        path.write_bytes(head)
        assert describe_file(path).kind == kind, head
        assert extract_eprint(path, tmp_path / f"out{i}").kind == kind, head
