"""Stage-1 arXiv retrieval against the loopback mirror, fed with recorded API answers and real e-prints."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import socket
import tarfile
import threading
from pathlib import Path

import pytest
from helpers.clock import FakeClock
from helpers.paths import SHARED

from theorembench.sources import arxiv as ax
from theorembench.sources.arxiv import (
    ArxivNotFound,
    ArxivQueryError,
    ArxivSource,
    ArxivThrottled,
    ArxivUnavailable,
    PaperMeta,
    detect_kind,
)
from theorembench.testing.arxiv_mirror import ArxivMirror, Reply

API = SHARED / "data" / "arxiv_api"
PAPERS = SHARED / "data" / "papers"
ONE = API / "id_1605.08386_math.CO.xml"
TEN = API / "query_testing_start10_max10.xml"
NONE = API / "id_0000.0000_no_results.xml"
BAD = API / "id_abc_http400_error.xml"
TAO_TGZ = PAPERS / "tao-factorial" / "eprint.tar.gz"
TAO_GZ = PAPERS / "tao-factorial" / "eprint.gz"
SAG_TGZ = PAPERS / "sag-projective" / "eprint.tar.gz"
TEN_IDS = [
    "2403.16981", "2004.03322", "1912.09881", "2406.19956", "1912.04900",
    "2301.05651", "1605.01097", "2301.13615", "2407.18756", "2202.06271",
]  # fmt: skip
PDF_BYTES = b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n"
MONTH_QUERY = re.compile("submittedDate")

# One rule set for most tests: the recorded answers, routed as arXiv would route them.
RULES = [
    ({"id_list": "1605.08386"}, ONE),
    ({"id_list": "0000.0000"}, NONE),
    ({"id_list": "abc"}, Reply(400, BAD)),
    ({"id_list": ",".join(TEN_IDS)}, TEN),
    ({"search_query": MONTH_QUERY, "start": "0"}, TEN),
    ({"search_query": MONTH_QUERY}, NONE),
]
EPRINTS = {
    "2503.20170": TAO_TGZ,  # the latest version: multi-file form
    "2503.20170v1": TAO_GZ,  # version 1: arXiv's single-file form
    "2405.13916": SAG_TGZ,
    "2401.00001": PDF_BYTES,  # a PDF-only submission
}


@pytest.fixture(autouse=True)
def _data_and_fresh_limiter():
    if not (ONE.is_file() and TAO_TGZ.is_file()):
        pytest.skip(f"shared data not found under {SHARED / 'data'}")
    ax.LIMITER.reset()
    yield
    ax.LIMITER.reset()


@pytest.fixture
def mirror():
    with ArxivMirror(RULES, eprints=EPRINTS) as server:
        yield server


def source(mirror: ArxivMirror, tmp_path: Path, **kw) -> ArxivSource:
    kw.setdefault("delay_s", 0.0)
    return ArxivSource(mirror.base_url, cache_dir=tmp_path / "cache", **kw)


def month_ranges(mirror: ArxivMirror) -> list[str]:
    out = []
    for req in mirror.requests_to("/api/query"):
        if req.query.get("start") == "0":
            m = re.search(r"submittedDate:\[(\d{12}) TO (\d{12})\]", req.query["search_query"])
            assert m, req.query
            out.append(f"{m.group(1)}-{m.group(2)}")
    return out


# --------------------------------------------------------------------------- parsing


def test_fetch_ids_parses_every_field(mirror, tmp_path):
    (paper,) = source(mirror, tmp_path).fetch_ids(["1605.08386"])
    assert paper == PaperMeta(
        arxiv_id="1605.08386",
        version=1,
        title="Heat-bath random walks with Markov bases",
        authors=["Caprice Stanley", "Tobias Windisch"],
        abstract=paper.abstract,
        primary_category="math.CO",
        categories=["math.CO", "math.ST"],
        published="2016-05-26T17:59:46Z",
        updated="2016-05-26T17:59:46Z",
        abs_url="https://arxiv.org/abs/1605.08386v1",
        pdf_url="https://arxiv.org/pdf/1605.08386v1",
        eprint_url="https://arxiv.org/e-print/1605.08386v1",
        doi=None,
        journal_ref=None,
        comment="20 pages, 3 figures",
        license=None,
    )
    assert paper.abstract.startswith("Graphs on lattice points are studied")
    assert paper.abstract.endswith("is an expander in fixed dimension.")
    assert paper.versioned_id == "1605.08386v1"
    assert PaperMeta.from_dict(json.loads(json.dumps(paper.to_dict()))) == paper
    (req,) = mirror.requests
    assert req.path == "/api/query"
    assert req.query["id_list"] == "1605.08386" and req.query["start"] == "0"


def test_ten_entry_feed_doi_and_mojibake(mirror, tmp_path):
    papers = source(mirror, tmp_path).fetch_ids(TEN_IDS)
    assert [p.arxiv_id for p in papers] == TEN_IDS
    first = papers[0]
    assert (first.version, first.primary_category) == (2, "math.ST")
    assert first.categories == ["math.ST", "cs.IT", "stat.ML"]
    assert first.authors == ["Ankit Pensia", "Varun Jog", "Po-Ling Loh"]
    assert (first.published, first.updated) == ("2024-03-25T17:42:32Z", "2025-05-24T05:50:33Z")
    # the recorded double-encoding survives verbatim, U+0080 included, and so does the raw LaTeX
    assert "type-I error at most $Î±$" in first.abstract
    assert "prior distribution $(Ï\x80, 1-Ï\x80)$" in first.abstract
    assert "number of i.i.d.\\ samples" in first.abstract
    assert "\n" not in first.abstract
    with_doi = [p for p in papers if p.doi]
    assert [(p.arxiv_id, p.doi) for p in with_doi] == [("2407.18756", "10.1145/3679006.3685071")]
    assert with_doi[0].abs_url == "https://arxiv.org/abs/2407.18756v1"  # not the doi link
    assert papers[-1].authors[0] == "Katharina GÃ¶tz"
    assert all(p.license is None and p.journal_ref is None for p in papers)
    assert papers[3].version == 3 and papers[3].eprint_url == "https://arxiv.org/e-print/2406.19956v3"
    json.dumps([p.to_dict() for p in papers], ensure_ascii=False)
    # the offline parser sees the same thing
    assert ax.parse_feed(TEN.read_bytes()) == papers


def test_no_results_feed(mirror, tmp_path):
    assert source(mirror, tmp_path).fetch_ids(["0000.0000"]) == []
    assert len(mirror.requests) == 1  # an empty first page is an answer, not a flake


def test_http_400_raises_query_error_with_api_message(mirror, tmp_path):
    with pytest.raises(ArxivQueryError, match="incorrect id format for abc") as info:
        source(mirror, tmp_path, max_retries=3).fetch_ids(["abc"])
    assert "400" in str(info.value)
    assert [r.status for r in mirror.requests] == [400]  # not retried


def test_error_feed_with_status_200_is_also_a_query_error(tmp_path):
    with ArxivMirror([({"id_list": "abc"}, BAD)]) as m:
        with pytest.raises(ArxivQueryError, match="incorrect id format for abc"):
            source(m, tmp_path).fetch_ids(["abc"])
    with pytest.raises(ArxivQueryError, match="incorrect id format for abc"):
        ax.parse_feed(BAD.read_bytes())


def test_license_is_read_when_the_feed_has_one():
    body = ONE.read_bytes().replace(
        b"<arxiv:comment>",
        b"<arxiv:license>http://creativecommons.org/licenses/by/4.0/</arxiv:license><arxiv:comment>",
    )
    (paper,) = ax.parse_feed(body)
    assert paper.license == "http://creativecommons.org/licenses/by/4.0/"


# --------------------------------------------------------------------------- search_month


def test_search_month_stops_at_max_results(mirror, tmp_path):
    seen: list[int] = []
    papers = source(mirror, tmp_path).search_month("2025-03", max_results=4, progress=seen.append)
    assert [p.arxiv_id for p in papers] == TEN_IDS[:4]
    assert seen == [1, 2, 3, 4]
    (req,) = mirror.requests  # one page was enough: no further page, no wider window
    assert req.query["search_query"] == "cat:math.* AND submittedDate:[202503010000 TO 202503012359]"
    assert (req.query["sortBy"], req.query["sortOrder"]) == ("submittedDate", "ascending")
    assert req.query["max_results"] == "4"


def test_search_month_widens_the_window_without_duplicates(mirror, tmp_path):
    seen: list[int] = []
    papers = source(mirror, tmp_path, max_retries=0).search_month(
        "2025-02", category="math.CO", max_results=50, progress=seen.append
    )
    # every window answers the same ten entries: they are kept (and counted) once
    assert [p.arxiv_id for p in papers] == TEN_IDS
    assert seen == list(range(1, 11))
    assert month_ranges(mirror) == [
        "202502010000-202502012359",
        "202502020000-202502032359",
        "202502040000-202502072359",
        "202502080000-202502152359",
        "202502160000-202502282359",
    ]
    starts = [r.query["search_query"] for r in mirror.requests_to("/api/query") if r.query["start"] == "0"]
    assert all(q.startswith("cat:math.CO AND ") for q in starts)


def test_search_month_empty_month(tmp_path):
    with ArxivMirror(lambda params: NONE) as m:
        assert source(m, tmp_path).search_month("2024-02", max_results=10) == []
        # the whole (leap) month was searched, one request per window
        assert month_ranges(m) == [
            "202402010000-202402012359",
            "202402020000-202402032359",
            "202402040000-202402072359",
            "202402080000-202402152359",
            "202402160000-202402292359",
        ]
        assert len(m.requests) == 5


@pytest.mark.parametrize("bad", ["2025-13", "2025-00", "2025-3", "202503", "March 2025", "", "1985-01", "2025-03-01"])
def test_invalid_month_is_a_value_error(mirror, tmp_path, bad):
    with pytest.raises(ValueError, match="YYYY-MM"):
        source(mirror, tmp_path).search_month(bad)
    assert mirror.requests == []


def test_invalid_category_is_a_value_error(mirror, tmp_path):
    with pytest.raises(ValueError, match="category"):
        source(mirror, tmp_path).search_month("2025-03", category="math.CO OR cat:cs.AI")
    assert mirror.requests == []


# --------------------------------------------------------------------------- retries


def test_503_twice_then_success_is_retried_with_growing_backoff(mirror, tmp_path):
    clock = FakeClock()
    mirror.fail_next(2, 503)
    src = source(mirror, tmp_path, delay_s=1.0, max_retries=3, clock=clock, sleep=clock.sleep)
    (paper,) = src.fetch_ids(["1605.08386"])
    assert paper.arxiv_id == "1605.08386"
    assert [r.status for r in mirror.requests] == [503, 503, 200]
    assert clock.sleeps == [2.0, 4.0]  # delay_s * 2**attempt between tries, no real waiting


def test_retry_after_header_is_honoured(mirror, tmp_path):
    clock = FakeClock()
    mirror.fail_next(1, 429, retry_after=7)
    src = source(mirror, tmp_path, delay_s=1.0, clock=clock, sleep=clock.sleep)
    assert len(src.fetch_ids(["1605.08386"])) == 1
    assert clock.sleeps == [7.0]


def test_plain_text_rate_exceeded_answer_is_retried(tmp_path):
    answers = iter([Reply(200, b"Rate exceeded.", "text/plain"), ONE])
    with ArxivMirror(lambda params: next(answers)) as m:
        assert [p.arxiv_id for p in source(m, tmp_path).fetch_ids(["1605.08386"])] == ["1605.08386"]
        assert len(m.requests) == 2


@pytest.mark.parametrize("status", [503, 429])
def test_persistent_throttling_raises_arxiv_throttled(mirror, tmp_path, status):
    clock = FakeClock()
    mirror.fail_next(1000, status)
    src = source(mirror, tmp_path, delay_s=3.0, max_retries=2, clock=clock, sleep=clock.sleep)
    with pytest.raises(ArxivThrottled) as info:
        src.fetch_ids(["1605.08386"])
    err = info.value
    assert (err.status, err.retries) == (status, 2)
    message = str(err)
    assert "throttling" in message and f"HTTP {status}" in message
    assert "2 retries" in message and "--base-url" in message and "later" in message
    assert len(mirror.requests) == 3  # the first try + max_retries
    assert clock.sleeps == [6.0, 12.0]


def test_persistent_throttling_of_a_download(mirror, tmp_path):
    mirror.fail_next(1000, 503)
    src = source(mirror, tmp_path, max_retries=1)
    with pytest.raises(ArxivThrottled, match="e-print"):
        src.download_eprint("2503.20170")
    assert len(mirror.requests) == 2
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-written left behind


def test_server_errors_and_connection_errors_give_arxiv_unavailable(mirror, tmp_path):
    mirror.fail_next(1000, 500)
    with pytest.raises(ArxivUnavailable, match="HTTP 500"):
        source(mirror, tmp_path, max_retries=1).fetch_ids(["1605.08386"])
    assert len(mirror.requests) == 2

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ax.LIMITER.reset()  # the real-clock requests above are no reference for the fake clock
    clock = FakeClock()
    src = ArxivSource(
        f"http://127.0.0.1:{port}", cache_dir=tmp_path / "c2", delay_s=0.5, max_retries=2,
        clock=clock, sleep=clock.sleep, timeout_s=5,
    )  # fmt: skip
    with pytest.raises(ArxivUnavailable, match="connection error"):
        src.fetch_ids(["1605.08386"])
    assert clock.sleeps == [1.0, 2.0]


# --------------------------------------------------------------------------- the limiter


def test_limiter_spaces_queries_and_downloads_with_one_process_wide_lock(mirror, tmp_path):
    clock = FakeClock()
    a = source(mirror, tmp_path, delay_s=3.0, clock=clock, sleep=clock.sleep)
    b = ArxivSource(mirror.base_url, cache_dir=tmp_path / "other", delay_s=3.0, clock=clock, sleep=clock.sleep)
    assert a.limiter is b.limiter is ax.LIMITER

    a.fetch_ids(["1605.08386"])  # first request of the process: no wait
    assert clock.sleeps == [] and ax.LIMITER.last == 1000.0
    a.download_eprint("2503.20170")  # a download waits for the query
    assert clock.sleeps == [3.0] and ax.LIMITER.last == 1003.0
    clock.now += 1.0  # time spent elsewhere counts
    b.fetch_ids(["1605.08386"])  # another source, same limiter
    assert clock.sleeps == [3.0, 2.0] and ax.LIMITER.last == 1006.0
    a.download_eprint("2503.20170")  # a cache hit is not a request: no wait
    assert clock.sleeps == [3.0, 2.0]
    assert [r.path for r in mirror.requests] == ["/api/query", "/e-print/2503.20170", "/api/query"]


def test_one_connection_at_a_time_across_threads(tmp_path):
    with ArxivMirror(RULES, eprints=EPRINTS, latency_s=0.05) as m:
        src = source(m, tmp_path)
        errors: list[BaseException] = []

        def work(i: int) -> None:
            try:
                if i % 2:
                    src.fetch_ids(["1605.08386"])
                else:
                    src.download_eprint("2405.13916", version=i + 1)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert errors == []
        assert len(m.requests) == 6
        assert m.max_in_flight == 1


# --------------------------------------------------------------------------- e-prints


def test_download_tar_gz_then_cache_hit(mirror, tmp_path):
    src = source(mirror, tmp_path)
    first = src.download_eprint("2503.20170")
    data = TAO_TGZ.read_bytes()
    assert first.kind == "tar.gz"
    assert first.path == tmp_path / "cache" / "2503.20170.tar.gz"
    assert first.path.read_bytes() == data
    assert (first.size, first.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    with tarfile.open(first.path) as tar:
        assert "erdos-391_improv.tex" in tar.getnames()
    again = src.download_eprint("2503.20170")
    assert again == first
    assert len(mirror.requests_to("/e-print/")) == 1
    # a fresh source over the same cache directory also reads the cache
    assert source(mirror, tmp_path).download_eprint("2503.20170") == first
    assert len(mirror.requests_to("/e-print/")) == 1
    assert not any(p.name.endswith(".part") for p in (tmp_path / "cache").iterdir())
    assert first.to_dict()["kind"] == "tar.gz"


CAP = 256 * 1024


@pytest.mark.parametrize("send_length", [True, False], ids=["content-length", "no-content-length"])
def test_download_over_the_cap_is_refused_while_streaming(tmp_path, send_length):
    """An e-print of 8 MiB against a 256 KiB cap: refused from its Content-Length before any byte is read,
    or (without one) cut off after at most one chunk past the cap; not retried, nothing left in the cache."""
    big = Reply(200, b"\x1f\x8b" + bytes(8 * 1024 * 1024), "application/octet-stream", send_length=send_length)
    with ArxivMirror(RULES, eprints={"2503.20170": big}) as server:
        src = source(server, tmp_path, max_retries=2, max_eprint_bytes=CAP)
        with pytest.raises(ax.DownloadTooLarge, match="larger than the cap of 262144 bytes") as caught:
            src.download_eprint("2503.20170")
        assert len(server.requests_to("/e-print/")) == 1  # the same answer would come again: no retry
    if send_length:
        assert caught.value.bytes_read == 0 and "announces 8388610 bytes" in str(caught.value)
    else:
        assert CAP < caught.value.bytes_read <= CAP + 64 * 1024
    assert list((tmp_path / "cache").iterdir()) == []


def test_download_at_the_cap_is_kept(tmp_path):
    body = TAO_TGZ.read_bytes()
    with ArxivMirror(RULES, eprints={"2503.20170": Reply(200, body, "application/octet-stream", send_length=False)}) as server:
        got = source(server, tmp_path, max_eprint_bytes=len(body)).download_eprint("2503.20170")
    assert got.size == len(body) and got.path.read_bytes() == body


def test_api_answer_over_its_cap_is_refused(mirror, tmp_path, monkeypatch):
    from theorembench.sources import arxiv_http

    monkeypatch.setattr(arxiv_http, "MAX_FEED_BYTES", 1000)
    with pytest.raises(ax.DownloadTooLarge, match="API answer .* larger than the cap of 1000 bytes"):
        source(mirror, tmp_path).fetch_ids(["1605.08386"])


def test_download_single_file_gz(mirror, tmp_path):
    src = source(mirror, tmp_path)
    got = src.download_eprint("2503.20170", version=1)
    assert got.kind == "gz"
    assert got.path.name == "2503.20170v1.gz"
    assert b"\\documentclass" in gzip.decompress(got.path.read_bytes())
    assert src.download_eprint("2503.20170v1") == got  # version in the id: same cache entry
    assert [r.path for r in mirror.requests] == ["/e-print/2503.20170v1"]


def test_download_pdf_only_and_multi_dir_tar(mirror, tmp_path):
    src = source(mirror, tmp_path)
    pdf = src.download_eprint("2401.00001")
    assert (pdf.kind, pdf.path.suffix, pdf.size) == ("pdf", ".pdf", len(PDF_BYTES))
    sag = src.download_eprint("2405.13916")
    assert sag.kind == "tar.gz"
    with tarfile.open(sag.path) as tar:
        assert "projective/main.tex" in tar.getnames()


def test_download_unknown_id_is_not_found(mirror, tmp_path):
    with pytest.raises(ArxivNotFound, match="404"):
        source(mirror, tmp_path, max_retries=3).download_eprint("2501.99999")
    assert [r.status for r in mirror.requests] == [404]  # not retried
    assert not (tmp_path / "cache").exists() or list((tmp_path / "cache").iterdir()) == []


@pytest.mark.parametrize(
    ("arxiv_id", "version"),
    [("../../etc/passwd", None), ("2503.20170v2", 1), ("2503.20170", 0), ("abc", None)],
)
def test_download_rejects_bad_ids(mirror, tmp_path, arxiv_id, version):
    with pytest.raises(ValueError):
        source(mirror, tmp_path).download_eprint(arxiv_id, version)
    assert mirror.requests == []


def test_old_style_ids(mirror, tmp_path):
    mirror.eprints["math/0601001v2"] = b"\\documentclass{amsart}\n\\begin{document}\nx\n\\end{document}\n"
    got = source(mirror, tmp_path).download_eprint("math/0601001", 2)
    assert (got.kind, got.path.name) == ("tex", "math_0601001v2.tex")
    assert mirror.requests[0].path == "/e-print/math/0601001v2"
    assert ax.split_id("https://arxiv.org/abs/math.AG/0601001v3") == ("math.AG/0601001", 3)


# --------------------------------------------------------------------------- detect_kind


def _tar_bytes(name: str = "paper.tex", payload: bytes = b"\\documentclass{article}\n") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    return buf.getvalue()


def _v7_tar_bytes() -> bytes:
    """A pre-POSIX tar header: no magic, only a valid checksum."""
    block = bytearray(_tar_bytes()[:512])
    block[257:265] = b"\0" * 8
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def test_detect_kind_on_crafted_heads():
    tar = _tar_bytes()
    assert detect_kind(tar) == "tar"
    assert detect_kind(gzip.compress(tar)) == "tar.gz"
    assert detect_kind(gzip.compress(b"\\documentclass{article}\n" * 50)) == "gz"
    assert detect_kind(gzip.compress(tar)[:40]) == "gz"  # too short a head to see the tar
    assert detect_kind(b"\x1f\x8b\x08\x00garbage") == "gz"
    assert detect_kind(PDF_BYTES) == "pdf"
    assert detect_kind(b"\\documentclass[11pt]{amsart}\n") == "tex"
    assert detect_kind(b"\xef\xbb\xbf% arara: pdflatex\n\\input{x}\n") == "tex"
    assert detect_kind(b"\n\n  \\begin{document}\n") == "tex"
    assert detect_kind(b"%!PS-Adobe-3.0\n") == "unknown"
    assert detect_kind(b"<!DOCTYPE html><html><body>captcha</body></html>") == "unknown"
    assert detect_kind(b"\x00\x01\x02\x03" * 200) == "unknown"
    assert detect_kind(b"") == "unknown"
    assert detect_kind(_v7_tar_bytes()) == "tar"
    assert detect_kind(TAO_TGZ.read_bytes()[: ax.HEAD_BYTES]) == "tar.gz"
    assert detect_kind(TAO_GZ.read_bytes()[: ax.HEAD_BYTES]) == "gz"


def test_describe_file_matches_download(mirror, tmp_path):
    got = source(mirror, tmp_path).download_eprint("2503.20170")
    assert ax.describe_file(TAO_TGZ) == ax.EprintFile(TAO_TGZ, "tar.gz", got.size, got.sha256)
