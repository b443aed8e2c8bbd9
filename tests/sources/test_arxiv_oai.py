"""arXiv OAI-PMH client (sources/arxiv_oai.py) against the loopback mirror, fed with constructed answers
in the real format (tests/golden/arxiv_oai/README.md); expectations written by hand."""

from __future__ import annotations

import pytest
from helpers.clock import FakeClock
from helpers.paths import GOLDEN

from theorembench.sources.arxiv_errors import ArxivError, ArxivQueryError, ArxivThrottled
from theorembench.sources.arxiv_http import RateLimiter
from theorembench.sources.arxiv_oai import OAI_BASE, ArxivOai, first_version_date, parse_oai
from theorembench.testing.arxiv_mirror import ArxivMirror, Reply

OAI = GOLDEN / "arxiv_oai"
TAO = {"verb": "GetRecord", "identifier": "oai:arXiv.org:2403.16981", "metadataPrefix": "arXiv"}


def client(mirror: ArxivMirror, clock: FakeClock | None = None, **kw) -> ArxivOai:
    clock = clock or FakeClock()
    return ArxivOai(mirror.base_url, delay_s=kw.pop("delay_s", 0.0), clock=clock, sleep=clock.sleep,
                    limiter=RateLimiter(), **kw)  # fmt: skip


def test_get_record_reads_licence_dates_and_fields():
    with ArxivMirror(oai=[(TAO, OAI / "GetRecord_2403.16981.xml")]) as mirror:
        record = client(mirror).get_record("2403.16981v2")
        asked = mirror.requests_to("/oai")
    assert [r.query for r in asked] == [TAO]  # the version is dropped: OAI-PMH knows the latest only
    assert record is not None
    assert record.arxiv_id == "2403.16981"
    assert record.license == "http://creativecommons.org/licenses/by/4.0/"
    assert (record.created, record.updated) == ("2024-03-25", "2025-05-24")
    assert record.title == "The Sample Complexity of Simple Binary Hypothesis Testing"
    assert record.authors == ["Ankit Pensia", "Varun Jog", "Po-Ling Loh"]
    assert record.categories == ["math.ST", "cs.IT", "math.IT", "stat.ML", "stat.TH"]
    assert record.datestamp == "2025-05-27"
    assert record.sets == ["cs:cs:IT", "math:math:IT", "math:math:ST", "stat:stat:ML", "stat:stat:TH"]


def test_a_record_without_licence_and_without_updated():
    page = parse_oai((OAI / "GetRecord_1912.09881_no_license.xml").read_bytes())
    assert [(r.arxiv_id, r.license, r.created, r.updated) for r in page.records] == [
        ("1912.09881", None, "2019-12-20", None)]  # fmt: skip
    page = parse_oai((OAI / "GetRecord_2004.03322.xml").read_bytes())
    assert page.records[0].license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"


def test_id_does_not_exist_is_no_record():
    with ArxivMirror(oai=[({"verb": "GetRecord"}, OAI / "error_idDoesNotExist.xml")]) as mirror:
        assert client(mirror).get_record("2499.99999") is None
        assert client(mirror).get_records(["2499.99999", "2499.99999v2"]) == {}
        assert len(mirror.requests_to("/oai")) == 2  # one per distinct paper: the versions are one record


def test_other_oai_errors_raise_a_query_error():
    with (
        ArxivMirror(oai=[({"verb": "GetRecord"}, OAI / "error_badArgument.xml")]) as mirror,
        pytest.raises(ArxivQueryError, match="badArgument"),
    ):
        client(mirror).get_record("2403.16981")


def test_an_answer_that_is_not_oai_pmh_raises():
    with pytest.raises(ArxivError, match="not OAI-PMH"):
        parse_oai(b"<html><body>maintenance</body></html>")
    with pytest.raises(ArxivError, match="not XML"):
        parse_oai(b"Rate exceeded, come back later")


def test_list_records_follows_the_resumption_token_and_skips_deleted_records():
    first = {"verb": "ListRecords", "metadataPrefix": "arXiv", "set": "math:math:ST", "from": "2025-05-01",
             "until": "2025-05-31"}  # fmt: skip
    token = {"verb": "ListRecords", "resumptionToken": "5012345|1001"}
    routes = [(first, OAI / "ListRecords_page1.xml"), (token, OAI / "ListRecords_page2.xml")]
    with ArxivMirror(oai=routes) as mirror:
        records = list(client(mirror).list_records(set_spec="math:math:ST", from_date="2025-05-01", until="2025-05-31"))
        asked = [r.query for r in mirror.requests_to("/oai")]
    assert asked == [first, token]  # the token goes alone, as OAI-PMH requires; the empty token ends the list
    assert [(r.arxiv_id, r.license) for r in records] == [
        ("2403.16981", "http://creativecommons.org/licenses/by/4.0/"),
        ("1605.08386", "https://creativecommons.org/licenses/by-nc-sa/4.0/"),
    ]


def test_no_records_match_is_an_empty_list():
    with ArxivMirror(oai=[({"verb": "ListRecords"}, OAI / "error_noRecordsMatch.xml")]) as mirror:
        assert list(client(mirror).list_records(set_spec="math:math:ST", from_date="2099-01-01")) == []


def test_503_with_retry_after_is_waited_then_retried():
    clock = FakeClock()
    with ArxivMirror(oai=[(TAO, OAI / "GetRecord_2403.16981.xml")]) as mirror:
        mirror.fail_next(1, 503, retry_after=11)
        record = client(mirror, clock, delay_s=1.0).get_record("2403.16981")
        statuses = [r.status for r in mirror.requests_to("/oai")]
    assert statuses == [503, 200]
    assert clock.sleeps == [11.0]  # Retry-After (11 s) is longer than the backoff (2 s), so it is waited
    assert record is not None and record.license == "http://creativecommons.org/licenses/by/4.0/"


def test_persistent_503_raises_throttled_after_the_retries():
    clock = FakeClock()
    with ArxivMirror(oai=[(TAO, Reply(503, b"", "text/plain"))]) as mirror:
        with pytest.raises(ArxivThrottled):
            client(mirror, clock, delay_s=1.0, max_retries=2).get_record("2403.16981")
        assert len(mirror.requests_to("/oai")) == 3
    assert clock.sleeps == [2.0, 4.0]


def test_base_url_points_at_a_mirror_and_defaults_to_arxiv():
    assert ArxivOai().oai_url == OAI_BASE == "https://oaipmh.arxiv.org/oai"
    assert ArxivOai("http://127.0.0.1:8080/").oai_url == "http://127.0.0.1:8080/oai"


def test_first_version_date_keeps_the_earlier_date():
    assert first_version_date("2024-03-25", "2024-03-25T17:42:32Z") == "2024-03-25"
    # arXiv's current OAI service may put the latest version's date in <created>: the Atom date of v1 wins
    assert first_version_date("2025-05-24", "2024-03-25T17:42:32Z") == "2024-03-25"
    assert first_version_date("2020-04-07", None) == "2020-04-07"
    assert first_version_date(None, "2019-12-20T15:28:25Z") == "2019-12-20"
    assert first_version_date(None, None) is None
