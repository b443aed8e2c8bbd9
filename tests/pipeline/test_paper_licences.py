"""`papers fetch` reads each paper's licence and first-version date from OAI-PMH (pipeline/paper_licences.py),
against the loopback mirror: the recorded Atom feed plus constructed OAI-PMH answers (tests/golden/arxiv_oai)."""

from __future__ import annotations

import json
import re

from helpers.paths import GOLDEN, SHARED
from typer.testing import CliRunner

from theorembench.cli import app
from theorembench.sources import arxiv as ax
from theorembench.store import Store
from theorembench.store.papers import PaperRepo
from theorembench.testing.arxiv_mirror import ArxivMirror, Reply

API = SHARED / "data" / "arxiv_api"
OAI = GOLDEN / "arxiv_oai"
FEED = [({"search_query": re.compile("submittedDate"), "start": "0"}, API / "query_testing_start10_max10.xml"),
        ({"search_query": re.compile("submittedDate")}, API / "id_0000.0000_no_results.xml")]  # fmt: skip
EPRINTS = {"2004.03322v1": b"%PDF-1.5\n%\xe2\xe3\n"}  # the others are missing: a failed download changes nothing here
FETCH = ["papers", "fetch", "--month", "2024-03", "--max", "3", "--delay", "0", "--no-llm", "--no-extract"]
CC_BY = "http://creativecommons.org/licenses/by/4.0/"
ARXIV_ONLY = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
runner = CliRunner()


def oai_routes(answers: dict[str, object]) -> list:
    return [({"verb": "GetRecord", "identifier": f"oai:arXiv.org:{pid}", "metadataPrefix": "arXiv"}, answer)
            for pid, answer in answers.items()]  # fmt: skip


def fetch(oai: list) -> list[str]:
    """One `papers fetch` run against a fresh mirror; returns the OAI identifiers asked for, in order."""
    ax.LIMITER.reset()
    with ArxivMirror(FEED, oai=oai, eprints=EPRINTS) as mirror:
        res = runner.invoke(app, [*FETCH, "--base-url", mirror.base_url], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        return [r.query.get("identifier", "") for r in mirror.requests_to("/oai")]


def papers(tmp_path) -> dict[str, dict]:
    with Store(tmp_path / "home" / "theorembench.db") as store:
        return {p["id"]: p for p in PaperRepo(store).list(month="2024-03")}


def test_fetch_stores_licences_and_first_version_dates_and_asks_again_only_for_the_unknown(tmp_path):
    found = {"2403.16981": OAI / "GetRecord_2403.16981.xml", "2004.03322": OAI / "GetRecord_2004.03322.xml",
             "1912.09881": OAI / "error_idDoesNotExist.xml"}  # fmt: skip
    asked = fetch(oai_routes(found))
    assert asked == ["oai:arXiv.org:2403.16981", "oai:arXiv.org:2004.03322", "oai:arXiv.org:1912.09881"]
    rows = papers(tmp_path)
    assert rows["2403.16981v2"]["license"] == CC_BY
    assert rows["2403.16981v2"]["meta"]["created"] == "2024-03-25"
    assert rows["2004.03322v1"]["license"] == ARXIV_ONLY
    assert rows["2004.03322v1"]["meta"]["created"] == "2020-04-07"
    missing = rows["1912.09881v1"]
    assert missing["license"] is None and "created" not in missing["meta"] and not missing["meta"].get("oai_checked")

    # next run: only the paper OAI-PMH had no record of is asked again; now its record states no licence
    found["1912.09881"] = OAI / "GetRecord_1912.09881_no_license.xml"
    assert fetch(oai_routes(found)) == ["oai:arXiv.org:1912.09881"]
    checked = papers(tmp_path)["1912.09881v1"]
    assert checked["license"] is None and checked["meta"]["oai_checked"] is True
    assert checked["meta"]["created"] == "2019-12-20"
    assert papers(tmp_path)["2403.16981v2"]["license"] == CC_BY  # kept

    # a third run has nothing left to ask: arXiv's answer "no licence" is an answer
    assert fetch(oai_routes(found)) == []


def test_an_oai_outage_leaves_the_licences_unknown_and_the_next_run_fetches_them(tmp_path):
    down = Reply(503, b"", "text/plain")
    asked = fetch(oai_routes({"2403.16981": down, "2004.03322": down, "1912.09881": down}))
    # 4 attempts for the first paper (3 retries), then the stage stops for this run
    assert asked == ["oai:arXiv.org:2403.16981"] * 4
    rows = papers(tmp_path)
    assert len(rows) == 3 and all(p["license"] is None and not p["meta"].get("oai_checked") for p in rows.values())

    up = {"2403.16981": OAI / "GetRecord_2403.16981.xml", "2004.03322": OAI / "GetRecord_2004.03322.xml",
          "1912.09881": OAI / "GetRecord_1912.09881_no_license.xml"}  # fmt: skip
    assert len(fetch(oai_routes(up))) == 3
    rows = papers(tmp_path)
    assert (rows["2403.16981v2"]["license"], rows["2004.03322v1"]["license"]) == (CC_BY, ARXIV_ONLY)


def test_the_earlier_first_version_date_wins_over_a_later_oai_created(tmp_path):
    """arXiv's OAI service may give the latest version's date as <created>: the Atom feed's v1 date is kept."""
    later = (OAI / "GetRecord_2403.16981.xml").read_bytes().replace(b"<created>2024-03-25", b"<created>2025-05-24")
    fetch(oai_routes({"2403.16981": later}))
    assert papers(tmp_path)["2403.16981v2"]["meta"]["created"] == "2024-03-25"


def test_papers_show_and_list_give_the_licence(tmp_path):
    fetch(oai_routes({"2403.16981": OAI / "GetRecord_2403.16981.xml", "2004.03322": OAI / "GetRecord_2004.03322.xml"}))
    res = runner.invoke(app, ["papers", "show", "2403.16981v2"], catch_exceptions=False)
    assert f"licence: CC BY 4.0 ({CC_BY})" in res.output
    res = runner.invoke(app, ["papers", "show", "2004.03322v1"], catch_exceptions=False)
    assert "licence: arXiv non-exclusive" in res.output and "text not redistributable" in res.output
    res = runner.invoke(app, ["papers", "show", "1912.09881v1"], catch_exceptions=False)
    assert "licence: unknown - text not redistributable" in res.output
    res = runner.invoke(app, ["papers", "list", "--json"], catch_exceptions=False)
    rows = {r["id"]: r["license"] for r in map(json.loads, res.output.splitlines())}
    assert rows == {"2403.16981v2": CC_BY, "2004.03322v1": ARXIV_ONLY, "1912.09881v1": None}
