"""Below full isolation, the commands that run a model's or generated code refuse before any work or model call,
run only when weaker isolation is accepted, and record the isolation they ran under in their results."""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

import pytest
from helpers.cli import PYTHON, cli_env
from helpers.improof_samples import odd_sums_yaml, submit

from theorembench.methods.eternal.evaluate import evaluate_eternal
from theorembench.methods.improof.answers import list_answers
from theorembench.methods.improof.catalog import import_problems
from theorembench.methods.improof.harness import run_improof_eval
from theorembench.methods.improof.stats_load import improof_stats
from theorembench.sandbox import Probe, SandboxError, policy
from theorembench.store import Store

MODEL = "openai-api/fake/m"
# what the fallback gives (no namespaces), and what it lacks, written out by hand
FALLBACK = ["rlimits", "clean-env", "new-session", "no-new-privs", "seccomp"]
MISSING = ["userns", "netns", "pidns", "ipcns", "utsns", "mountns(bwrap)", "nproc"]
WEAK_RECORD = {"layers": FALLBACK, "full": False, "missing": MISSING, "weak_isolation_accepted": True}
NO_BWRAP = "/nonexistent-theorembench-bin"  # a PATH on which bubblewrap is not found


def weak(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one without bubblewrap: the fallback's layers (the runs really go through the fallback)."""
    monkeypatch.setattr(policy, "probe", lambda: Probe("fallback", list(FALLBACK), True, None, ["no bwrap here"]))
    monkeypatch.setattr(policy, "_warned", True)


def cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "theorembench.cli", *args], env=cli_env(PATH=NO_BWRAP, **env), cwd=cwd,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def one_error_line(done: subprocess.CompletedProcess, purpose: str) -> str:
    assert done.returncode != 0, done.stdout + done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert f"refusing to run {purpose} below full isolation" in line
    assert "--accept-weak-isolation" in line and "theorembench sandbox check" in line
    assert "bubblewrap (bwrap) is not installed" in line
    return line


@pytest.fixture
def improof_store(tmp_path: Path):
    problems = tmp_path / "problems.yaml"
    problems.write_text(odd_sums_yaml(status="active"))
    with Store(tmp_path / "improof.db") as st:
        import_problems(st, problems)
        yield st


def test_agentic_improof_refuses_then_runs_when_weak_isolation_is_accepted(improof_store: Store, fake_env,
                                                                           tmp_path: Path, monkeypatch) -> None:  # fmt: skip
    weak(monkeypatch)
    fake_env.set_script({"rules": [
        {"match": "SUB-TWO", "reply": submit("100")}, {"match": "SUB-ONE", "reply": submit("9")},
        {"match": "MAIN-Q", "reply": [{"content": "", "tool_calls": [{"name": "python",
                                       "arguments": {"code": "print(6 * 7)"}}]}, submit("By induction.")]},
    ]})  # fmt: skip
    kw = dict(tools=("python",), main_tokens=1000, sub_tokens=500, tool_timeout_s=60, tool_memory_mb=1024,
              out_dir=tmp_path / "out", log_dir=tmp_path / "logs")  # fmt: skip
    with pytest.raises(SandboxError, match="refusing to run IMProofBench's python, bash and sage tools"):
        run_improof_eval(improof_store, MODEL, **kw)  # type: ignore[arg-type]
    assert fake_env.requests == [] and list_answers(improof_store) == [] and not (tmp_path / "out").exists()
    result = run_improof_eval(improof_store, MODEL, accept_weak_isolation=True, **kw)  # type: ignore[arg-type]
    assert result.results["isolation"] == WEAK_RECORD
    assert json.loads(result.path.read_text())["isolation"] == WEAK_RECORD
    tool_reply = [m for m in fake_env.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert "42" in json.dumps(tool_reply)  # the tool really ran, in the fallback
    stats = improof_stats(improof_store, out_dir=tmp_path / "stats")
    report = stats.paths["report"].read_text()
    assert (f"- run {result.run_id}: WEAK: missing userns, netns, pidns, ipcns, utsns, mountns(bwrap), nproc; "
            "layers rlimits, clean-env, new-session, no-new-privs, seccomp (accepted with --accept-weak-isolation)"
            ) in report  # fmt: skip
    assert stats.doc["isolation"] == {result.run_id: WEAK_RECORD}


def test_single_turn_improof_runs_no_code_and_is_not_refused(improof_store: Store, fake_env, tmp_path: Path,
                                                             monkeypatch) -> None:  # fmt: skip
    weak(monkeypatch)
    fake_env.set_script({"rules": [{"match": "SUB-TWO", "reply": "\\boxed{100}"}, {"match": "SUB-ONE", "reply": "\\boxed{9}"},
                                   {"match": "MAIN-Q", "reply": "Proof."}]})  # fmt: skip
    result = run_improof_eval(improof_store, MODEL, mode="single-turn", main_tokens=1000, sub_tokens=500,
                              out_dir=tmp_path / "out", log_dir=tmp_path / "logs")  # fmt: skip
    assert result.results["isolation"] == {"used": False, "reason": "single-turn: no tools"}


def test_improof_eval_command_without_bubblewrap_refuses_before_any_model_call(fake_env, tmp_path: Path) -> None:
    problems = tmp_path / "problems.yaml"
    problems.write_text(odd_sums_yaml(status="active"))
    with Store(tmp_path / "improof.db") as st:
        import_problems(st, problems)
    done = cli("improof", "eval", "--model", MODEL, "--tools", "python", "--db", str(tmp_path / "improof.db"),
               "--out", str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    one_error_line(done, "IMProofBench's python, bash and sage tools")
    assert fake_env.requests == [] and not (tmp_path / "out").exists()


def test_eternal_instantiate_without_bubblewrap_refuses_and_records_accepted_weak_isolation(tmp_path: Path,
                                                                                            fake_env) -> None:  # fmt: skip
    shipped = resources.files("theorembench.data").joinpath("eternal", "derangements.json")
    with resources.as_file(shipped) as path:
        templates = tmp_path / "templates.json"
        templates.write_bytes(Path(path).read_bytes())
    done = cli("eternal", "instantiate", str(templates), "--n", "3", "--out", str(tmp_path / "out"), cwd=tmp_path)
    one_error_line(done, "EternalMath validation of the templates' code")
    assert not (tmp_path / "out").exists()
    done = cli("eternal", "instantiate", str(templates), "--n", "3", "--out", str(tmp_path / "out"),
               "--accept-weak-isolation", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["isolation"] == WEAK_RECORD
    instances = [json.loads(x) for x in (tmp_path / "out" / "instances.jsonl").read_text().splitlines()]
    assert len(instances) == 3
    for inst in instances:
        ex = inst["execution"]
        assert (ex["isolation"], ex["full_isolation"], ex["weak_isolation_accepted"]) == (FALLBACK, False, True)
    # the evaluation on these instances says, in its report's header, how they were validated
    with Store(tmp_path / "eval.db") as st:
        outcome = evaluate_eternal(st, tmp_path / "out" / "instances.jsonl", MODEL, out_dir=tmp_path / "eval",
                                   write_log=False)  # fmt: skip
    assert outcome.results["isolation"] == WEAK_RECORD | {"instances_without_record": 0}
    assert ("Sandbox isolation of the instances' validation: WEAK: missing userns, netns, pidns, ipcns, utsns, "
            "mountns(bwrap), nproc; layers rlimits, clean-env, new-session, no-new-privs, seccomp (accepted with "
            "--accept-weak-isolation)") in outcome.files["report"].read_text()  # fmt: skip


def test_eternal_build_refuses_before_any_model_call_then_records_the_isolation(fake_env, tmp_path: Path,
                                                                                monkeypatch) -> None:  # fmt: skip
    from helpers.eternal import BASE, GEN, JUDGE, add_papers, rules

    from theorembench.methods.eternal.build import build_eternal

    weak(monkeypatch)
    fake_env.set_script({"rules": rules()})
    with Store(tmp_path / "e.db") as st:
        ids = add_papers(st, tmp_path, ("ALPHA",))
        kw = dict(paper_ids=list(ids.values()), generator=GEN, judge=JUDGE, overrides=BASE, instances_per_template=3,
                  seed=0, out_dir=tmp_path / "out")  # fmt: skip
        with pytest.raises(SandboxError, match="refusing to run EternalMath validation of generated code"):
            build_eternal(st, **kw)  # type: ignore[arg-type]
        assert fake_env.requests == [] and not (tmp_path / "out").exists()
        result = build_eternal(st, accept_weak_isolation=True, **kw)  # type: ignore[arg-type]
    assert result.summary["isolation"] == WEAK_RECORD
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["isolation"] == WEAK_RECORD
    instances = [json.loads(x) for x in (tmp_path / "out" / "instances.jsonl").read_text().splitlines()]
    assert len(instances) == 3
    assert all((i["execution"]["full_isolation"], i["execution"]["weak_isolation_accepted"]) == (False, True)
               for i in instances)  # fmt: skip


def test_the_demo_without_bubblewrap_refuses_before_its_first_step(tmp_path: Path) -> None:
    done = cli("demo", "--out-dir", str(tmp_path / "demo"), cwd=tmp_path)
    one_error_line(done, "the demo's EternalMath validation and IMProofBench tools")
    assert "1. papers" not in done.stdout and not (tmp_path / "demo").exists()


def test_sandbox_commands_without_bubblewrap(tmp_path: Path) -> None:
    done = cli("sandbox", "run", "--", "python", "-c", "print(6 * 7)", cwd=tmp_path)
    one_error_line(done, "sandboxed code")
    done = cli("sandbox", "run", "--no-strict", "--", "python", "-c", "print(6 * 7)", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["stdout"] == "42\n" and result["isolation"] == FALLBACK
    assert "WARNING: theorembench sandbox below full isolation (accepted)" in done.stderr
    done = cli("sandbox", "run", "--accept-weak-isolation", "--", "python", "-c", "print(6 * 7)", cwd=tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout)["isolation"] == FALLBACK
    done = cli("sandbox", "run", "--", "python", "-c", "print(6 * 7)", cwd=tmp_path,
               THEOREMBENCH_ACCEPT_WEAK_ISOLATION="1")  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["isolation"] == FALLBACK
    done = cli("sandbox", "run", "--strict", "--", "python", "-c", "print(6 * 7)", cwd=tmp_path,
               THEOREMBENCH_ACCEPT_WEAK_ISOLATION="1")  # fmt: skip
    assert done.returncode != 0 and "(strict: the option refuses even where a setting accepts)" in done.stderr
    done = cli("sandbox", "check", "--no-tools", cwd=tmp_path)
    assert done.returncode == 1 and "model-written code is refused" in done.stderr
    assert "problem: bubblewrap (bwrap) is not installed" in done.stdout
