"""EternalMath against its paper (issue 21, items 12-15): the authority rule, the validity review, the template
fields (the paper's own Appendix A.2 template among them) and time limits that scale with the instances."""

from __future__ import annotations

import re

from helpers.eternal import BASE, GEN, JUDGE, VALID, add_papers, derange, j, rules
from helpers.paths import SHARED

from theorembench.methods.eternal.authority import rule_counts, signals
from theorembench.methods.eternal.build import build_eternal, select_papers
from theorembench.methods.eternal.config import load_config
from theorembench.methods.eternal.filter import PaperInput, authority
from theorembench.store.papers import PaperRepo

API = SHARED / "data" / "arxiv_api"
PAPERS = SHARED / "data" / "papers"


def paper(meta=None, latex=None, source="arxiv") -> PaperInput:
    return PaperInput(id="p", source=source, title="t", abstract="a", latex=latex, theorem=None, meta=meta or {})


# -- item 12: authority --------------------------------------------------------------------------------


def test_default_authority_takes_signals_a_fresh_arxiv_paper_can_show():
    cfg = load_config(None).filter
    assert cfg.authority == "signals"
    fresh = paper(latex="\\address{Department of Mathematics, Some University, Somewhere}")
    assert authority(fresh, cfg).passed and "affiliation" in authority(fresh, cfg).reason
    accepted = paper(meta={"comment": "12 pages. Accepted for publication in Compositio Math."})
    assert signals(accepted, cfg) == {"publication note": "Accepted for publication in Compositio Math."}
    assert authority(accepted, cfg).passed
    nothing = paper(meta={"comment": "12 pages, 3 figures"}, latex="\\address{Somewhere, 12345}")
    assert not authority(nothing, cfg).passed and "no authority signal" in authority(nothing, cfg).reason
    strict = load_config(None, **{"filter.authority": "journal"}).filter
    assert not authority(fresh, strict).passed and not authority(accepted, strict).passed
    # a list of institutions replaces the generic affiliation signal
    listed = load_config(None, **{"filter.institutions": ["Institute for Advanced Study"]}).filter
    assert not authority(fresh, listed).passed
    ias = paper(latex="\\affiliation{School of Mathematics, Institute for Advanced Study}")
    assert authority(ias, listed).reason == "institution Institute for Advanced Study"
    venue = load_config(None, **{"filter.authority": "list", "filter.venues": ["Compositio"]}).filter
    assert authority(accepted, venue).reason == "venue Compositio"


def test_each_rule_counted_on_a_recorded_arxiv_month(tmp_path):
    """The recorded 10-entry feed, fetched through the arXiv mirror as the month 2024-03 (one e-print served:
    the Tao paper's source for 2403.16981v2, as the papers tests do). By hand, from the feed: one entry has a
    DOI (2407.18756v1) and none a journal-ref; three comments say "Accepted to", "Accepted at" and "To appear at"
    (2301.05651v1, 2301.13615v1, 2202.06271v1); the e-print's \\address names "UCLA Department of Mathematics".
    So: any 10, journal 1, list 0 (nothing listed), signals 1 + 3 + 1 = 5."""
    from theorembench.pipeline.papers import fetch_month
    from theorembench.sources import arxiv as ax
    from theorembench.store import Store
    from theorembench.testing.arxiv_mirror import ArxivMirror

    routes = [({"search_query": re.compile("submittedDate"), "start": "0"}, API / "query_testing_start10_max10.xml"),
              ({"search_query": re.compile("submittedDate")}, API / "id_0000.0000_no_results.xml")]  # fmt: skip
    ax.LIMITER.reset()
    with Store(tmp_path / "s.db") as store, ArxivMirror(routes, eprints={
            "2403.16981v2": PAPERS / "tao-factorial" / "eprint.tar.gz"}) as mirror:  # fmt: skip
        repo = PaperRepo(store)
        fetch_month(repo, month="2024-03", max_papers=10, base_url=mirror.base_url, delay_s=0)
        papers = select_papers(repo, "2024-03", None)
    counts = rule_counts(papers, load_config(None).filter)
    assert counts["papers"] == 10 and counts["rule"] == "signals"
    assert counts["passed"] == {"any": 10, "journal": 1, "list": 0, "signals": 5}
    assert counts["signals"] == {"DOI": 1, "publication note": 3, "affiliation": 1}


# -- item 13: the validity review --------------------------------------------------------------------------


def _validity_requests(fake) -> list[dict]:
    return [r for r in fake.requests if re.search(VALID, r["last_user"] or "")]


def test_validity_judge_reads_theorem_excerpt_and_several_instances(fake_env, store, tmp_path):
    fake_env.set_script({"rules": rules(alpha_templates=j({"templates": [derange("a1")]}))})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    result = build_eternal(store, paper_ids=list(ids.values()), generator=GEN, overrides=BASE,
                           instances_per_template=3, seed=0, out_dir=tmp_path / "o")  # fmt: skip
    [req] = _validity_requests(fake_env)
    prompt = req["last_user"]
    assert "THEOREM: Theorem 1; fixed points" in prompt  # the template's theorem and concept
    assert "For every $n \\ge 1$ the count is explicit." in prompt  # the paper's theorem, in the excerpt
    assert prompt.count("--- INSTANCE ") == 3 and result.funnel["instances"] == 3
    # no judge configured: the generator reviews its own templates, and the build says so
    assert req["model"] == "gen"
    assert any("the validity judge is the generator itself" in n for n in result.summary["notes"])


def test_validity_judge_defaults_to_the_configured_judge(fake_env, store, tmp_path):
    fake_env.set_script({"rules": rules(alpha_templates=j({"templates": [derange("a1")]}))})
    ids = add_papers(store, tmp_path, ("ALPHA",))
    result = build_eternal(store, paper_ids=list(ids.values()), generator=GEN, judge=JUDGE, overrides=BASE,
                           instances_per_template=3, seed=0, out_dir=tmp_path / "o")  # fmt: skip
    assert [r["model"] for r in _validity_requests(fake_env)] == ["judge"]
    assert not any("validity judge" in n for n in result.summary["notes"])
    assert load_config(None, **{"models.judge": JUDGE, "models.validity": "openai-api/fake/other"}).validity_judge \
        == "openai-api/fake/other"  # fmt: skip


# -- item 14: template fields ------------------------------------------------------------------------------

# The paper's Appendix A.2 meta-template, transcribed field by field (its wording shortened): no `params`, a
# `param_definition` in words, the formula it actually computes ((2**n - 1) * (n-1)!, while its comment and
# Theorem 1.6(b) say 2^(n-1) (n-1)!), paper-style code (`n = {n}`, print), three validation rules and no
# small_case_check. The problem binds n to its value ("$n = {n}$"), as the A.4 instance shows.
A2 = {
    "template_id": "abstract_algebra_cayley_graph_energy_001",
    "target_paper_module": "Energy of the Cayley graph Gamma_n(S_n), Theorem 1.6(b) of the cited paper",
    "core_math_concept": "E(Gamma_n(S_n)) = 2^(n-1) * (n-1)! for prime n",
    "param_definition": [{"var_name": "n", "var_type": "Integer",
                          "var_constraint": "n is a prime number, with n ∈ [5, 400] to keep the computation feasible",
                          "var_source": "drawn at random from the list of primes"}],
    "problem_template": "Let $\\Delta$ be the graph on the symmetric group $S_{{n}}$ (the permutations of "
                        "$\\{1, 2, \\dots, {n}\\}$) in which $u$ and $v$ are adjacent when $v = a \\circ u$ for an "
                        "$n$-cycle $a \\in S_{{n}}$ (a cycle of length ${n}$). Given that $n = {n}$ is a prime, "
                        "compute the energy of $\\Delta$.",
    "output_type": "Integer",
    "param_generation_rule": ["Step1: draw n at random from the list of primes."],
    "natural_lang_solution": "1. The graph is the Cayley graph of $S_{{n}}$ on its $n$-cycles. 2. By Theorem 1.6(b) "
                             "its energy is $2^{n-1} (n-1)!$. 3. Substitute $n = {n}$.",
    "formal_solution": "import math\n\nn = {n}\n\n# Theorem 1.6(b): E = 2^(n-1) * (n-1)!\n"
                       "result = (2**n - 1) * math.factorial(n - 1)\n\nprint(result)",
    "validation_rule": [{"type": "param_check", "rule": "n in [5, 7, 11, 13]"},
                        {"type": "execution_check", "rule": "formal_solution executes without error"},
                        {"type": "value_check", "rule": "result > 0"}],
}  # fmt: skip


def test_the_papers_a2_template_instantiates_and_is_marked_unverified(tmp_path):
    from theorembench.methods.eternal.instantiate import instantiate_templates, write_outputs
    from theorembench.methods.eternal.template import parse_template

    t = parse_template(A2)
    assert t.params == {"n": {"type": "prime", "min": 5, "max": 400}} and not t.verified
    assert t.notes == ["params read from param_definition: n = primes 5..400"]
    res = instantiate_templates([t], 76, seed=0)  # 5..400 holds 76 primes: all drawn; its own rule keeps 4
    values = {i["params_used"]["n"]: i["numerical_value"] for i in res.instances}
    # (2^n - 1)(n-1)!: 31 * 24, 127 * 720, 2047 * 3628800, 8191 * 479001600
    assert values == {5: "744", 7: "91440", 11: "7428153600", 13: "3923502105600"}
    assert all(i["verified"] is False for i in res.instances) and res.summary["unverified_instances"] == 4
    assert sum(r["stage"] == "params" for r in res.rejections) == 72
    [row] = res.summary["per_template"]
    assert any(n.startswith("unverified: no small_case_check") for n in row["notes"])
    # a release leaves them out unless told otherwise
    files = write_outputs(res, tmp_path / "out")
    assert (tmp_path / "out" / "instances.jsonl").read_text() == ""
    assert len(files["unverified"].read_text().splitlines()) == 4
    kept = write_outputs(res, tmp_path / "kept", keep_unverified=True)
    assert len(kept["instances"].read_text().splitlines()) == 4 and "unverified" not in kept


def test_a_definition_that_cannot_be_read_names_the_params_to_add():
    import pytest

    from theorembench.methods.eternal.definitions import domain_of
    from theorembench.methods.eternal.template import TemplateError, parse_template

    vague = dict(A2, param_definition=[{"var_name": "n", "var_type": "Integer", "var_constraint": "n is large"}])
    with pytest.raises(TemplateError) as exc:
        parse_template(vague)
    assert exc.value.problems == [
        "params: required: param_definition's var_constraint for n could not be read as a domain (no closed range "
        "in 'n is large'); add \"params\": {\"n\": {\"type\": \"int\", \"min\": 1, \"max\": 20}}"]
    assert domain_of({"var_name": "k", "var_type": "int", "var_constraint": "$2 \\le k < 9$"})[0] == \
        {"type": "int", "min": 2, "max": 8}  # fmt: skip
    assert domain_of({"var_name": "q", "var_type": "Integer", "var_constraint": "q ∈ {3, 5, 9}"})[0] == \
        {"type": "choice", "values": [3, 5, 9]}  # fmt: skip
    assert domain_of({"var_name": "x", "var_type": "Rational", "var_constraint": "0 < x < 1"})[0] is None


def test_small_cases_as_a_domain_and_the_positivity_rule():
    from theorembench.methods.eternal.instantiate import instantiate_templates
    from theorembench.methods.eternal.template import parse_template

    t = parse_template({
        "template_id": "shift", "problem_template": "Let $n = {n}$. What is $n - 2$?",
        "formal_solution": "result = n - 2",
        "natural_lang_solution": "Subtract two.", "output_type": "Integer",
        "params": {"n": {"type": "int", "min": 1, "max": 6}},
        "validation_rule": [{"type": "positivity", "rule": "result > 0"}],
        "small_case_check": {"params": {"n": {"type": "int", "min": 3, "max": 5}}, "code": "result = n - 2"},
    })  # fmt: skip
    assert [c["n"] for c in t.small_case_check.cases] == [3, 4, 5] and t.verified
    res = instantiate_templates([t], 6, seed=0)
    # n - 2 > 0 fails for n = 1 and 2 (values -1 and 0): the positivity rule is checked, not ignored
    assert sorted(i["params_used"]["n"] for i in res.instances) == [3, 4, 5, 6]
    assert sorted(r["params_used"]["n"] for r in res.rejections if r["stage"] == "value_rule") == [1, 2]
    assert not any("ignored" in n for n in res.summary["per_template"][0]["notes"])


def test_the_prompts_teach_only_checked_rules_and_ask_for_the_solution_fields():
    from theorembench.methods.eternal import prompts as P
    from theorembench.methods.eternal.template import parse_template
    from theorembench.methods.eternal.validate import rule_notes

    example = parse_template(P._EXAMPLE_TEMPLATE)
    assert rule_notes(example) == [] and example.natural_lang_solution
    assert "exact_expression" in P._EXAMPLE_TEMPLATE["formal_solution"] and "exact_expression" in P.TEMPLATE_RULES
    assert "exact_expression" in P.solution_messages(P._EXAMPLE_TEMPLATE)[1]["content"]
    required = P.TEMPLATES_SCHEMA["properties"]["templates"]["items"]["required"]
    assert {"natural_lang_solution", "validation_rule"} <= set(required)


def test_build_prints_the_notes_of_its_templates(fake_env, tmp_path):
    from typer.testing import CliRunner

    from theorembench.cli.app import app
    from theorembench.store import Store

    odd = dict(derange("a1"), validation_rule=[{"type": "monotonic", "rule": "result grows with n"}])
    fake_env.set_script({"rules": rules(alpha_templates=j({"templates": [odd]}))})
    db = tmp_path / "c.db"
    with Store(db) as s:
        ids = add_papers(s, tmp_path, ("ALPHA",))
    (tmp_path / "cfg.toml").write_text('[filter]\nreference_date = "2026-01-15"\n[translation]\nenabled = false\n')
    res = CliRunner().invoke(app, ["eternal", "build", "--paper", ids["ALPHA"], "--generator", GEN, "--config",
                                   str(tmp_path / "cfg.toml"), "--db", str(db), "--out", str(tmp_path / "o")])  # fmt: skip
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert f"note: {ids['ALPHA']}:t1: validation rule of type 'monotonic' ignored: result grows with n" in flat
    assert "note: the validity judge is the generator itself" in flat
    rules_line = "authority rules on these 1 papers (passed): any 1, journal 1, list 0, signals 1; this build: signals"
    assert rules_line in flat


# -- item 15: time limits ----------------------------------------------------------------------------------


def test_the_process_limit_grows_with_the_number_of_instances():
    """Each run sleeps 0.25 s. The formula's process holds 4 runs (1 s), the replay's 12 (3 s): a fixed limit of
    1 s per process would stop both before their last instances; the limit 1 s + 2 s per run keeps all four."""
    from theorembench.methods.eternal.instantiate import instantiate_templates
    from theorembench.methods.eternal.template import parse_template
    from theorembench.methods.eternal.verify import role_limit

    slow = parse_template({"template_id": "slow", "problem_template": "Let $n = {n}$. What is $n$?",
                           "natural_lang_solution": "It is {n}.", "output_type": "Integer",
                           "formal_solution": "import time\ntime.sleep(0.25)\nresult = n",
                           "params": {"n": {"type": "choice", "values": [1, 2, 3, 4]}}})  # fmt: skip
    assert role_limit(1, 2, 12) == 25 and role_limit(1, 2, 4, 0.5) == 9.5
    res = instantiate_templates([slow], 4, seed=0, timeout_s=1, per_instance_s=2)
    assert sorted(i["params_used"]["n"] for i in res.instances) == [1, 2, 3, 4] and res.rejections == []


def test_instances_lost_to_the_process_limit_are_not_failed_executions():
    from theorembench.methods.eternal.runs import RoleOutcome, Run
    from theorembench.methods.eternal.template import parse_template
    from theorembench.methods.eternal.verify import _judge
    from theorembench.sandbox.result import SandboxResult

    def role(name: str, status: str, runs: dict) -> RoleOutcome:
        sb = SandboxResult(status=status, exit_code=None, signal=9, stdout="", stderr="", stdout_truncated=False,
                           stderr_truncated=False, wall_s=3.0, cpu_s=3.0, peak_memory_mb=10.0, isolation=[],
                           reason="wall-clock limit of 3 s")  # fmt: skip
        return RoleOutcome(role=name, sandbox=sb, runs=runs, started=set(runs))

    t = parse_template({"template_id": "t", "problem_template": "Let $n = {n}$. Give $n$.", "output_type": "Integer",
                        "natural_lang_solution": "{n}", "formal_solution": "result = n",
                        "params": {"n": {"type": "choice", "values": [1, 2]}}})  # fmt: skip
    formula = role("formula", "timeout", {"inst0": Run("ok", value=1, mode_ok=True)})
    replay = role("replay", "ok", {})
    stage, reason = _judge(t, 1, formula, replay, (1, 2), set())
    assert stage == "time_limit" and "formula process reached its limit" in reason and "before this instance" in reason
    # its own per-run timer is the instance's failure: still an execution rejection
    own = role("formula", "ok", {"inst1": Run("timeout", error="no result within 2 s")})
    assert _judge(t, 1, own, replay, (1, 2), set()) == ("execution", "timed out: no result within 2 s")
    # a replay process stopped at its limit: lost, not nondeterministic
    assert _judge(t, 0, formula, role("replay", "timeout", {}), (1, 2), set())[0] == "time_limit"
