"""Overhead of the IMProofBench harness per turn, against direct chat calls to the same fake server, in one run.

  harness   one problem whose main stage is a scripted T-turn conversation (T-1 turns that call the
            cheap ``search`` tool, then ``submit``), run through ``run_improof_eval``: Inspect AI, the
            stage loop, the per-turn store writes and the usage notes. Per turn: the median gap between
            consecutive requests as the server saw them (the eval's start-up is reported apart).
  direct    the same T calls made with the ``openai`` SDK, the conversation growing the same way
            (assistant message, tool result, note), with no harness around them.
  replay    the same command again: every turn comes back from the store, no model call is made.

Usage:  python bench/improof_harness.py [--turns 20] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

PROBLEM = """\
id: bench-problem
title: Benchmark problem
statement: "MAIN-Q: show that 1 + 1 = 2."
solution: By definition.
difficulty: {background: 1, reasoning: 1, insight: 1, compute: 1}
status: active
subquestions:
  - text: "SUB-ONE: what is 1 + 1?"
    answer: "2"
    kind: integer
"""


def _script(turns: int) -> dict:
    search = {"tool_calls": [{"name": "search", "arguments": {"query": "one plus one"}}]}
    submit = {"tool_calls": [{"name": "submit", "arguments": {"answer": "2"}}]}
    return {"rules": [
        {"match": "SUB-ONE", "reply": submit, "usage": {"prompt_tokens": 10, "completion_tokens": 10}},
        {"match": "MAIN-Q", "reply": [search] * (turns - 1) + [submit],
         "usage": {"prompt_tokens": 10, "completion_tokens": 10}},
    ]}  # fmt: skip


def _gaps(requests: list[dict]) -> list[float]:
    times = [r["time"] for r in requests]
    return [b - a for a, b in zip(times, times[1:])]


def _harness(turns: int, work: Path) -> dict:
    from theorembench.methods.improof.catalog import import_problems
    from theorembench.methods.improof.harness import run_improof_eval
    from theorembench.store import open_store
    from theorembench.testing.fakellm import FakeLLMServer

    (work / "problem.yaml").write_text(PROBLEM)
    os.environ["THEOREMBENCH_HOME"] = str(work / "home")
    with FakeLLMServer(_script(turns)) as server, open_store(None) as store:
        os.environ.update(FAKE_BASE_URL=server.base_url, FAKE_API_KEY="bench")
        import_problems(store, work / "problem.yaml")

        def once() -> float:
            t0 = time.perf_counter()
            run_improof_eval(store, "openai-api/fake/m", tools=("search",), main_tokens=10**6, sub_tokens=10**5,
                             out_dir=work / "out", log_dir=work / "logs")  # fmt: skip
            return time.perf_counter() - t0

        wall = once()
        requests = server.requests
        assert len(requests) == turns + 1, len(requests)
        gaps = _gaps(requests[:turns])
        replay = once()
        assert len(server.requests) == turns + 1  # nothing asked again
    return {"wall_s": wall, "turn_s": statistics.median(gaps), "replay_wall_s": replay}


def _direct(turns: int) -> dict:
    import openai

    from theorembench.testing.fakellm import FakeLLMServer

    tool = {"type": "function", "function": {"name": "search", "description": "Search.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}  # fmt: skip
    with FakeLLMServer(_script(turns)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
        messages: list[dict] = [{"role": "user", "content": "MAIN-Q: show that 1 + 1 = 2."}]
        t0 = time.perf_counter()
        for _ in range(turns):
            msg = client.chat.completions.create(model="m", messages=messages, tools=[tool]).choices[0].message
            messages.append(msg.model_dump(exclude_none=True))
            for call in msg.tool_calls or []:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": "No papers match."})
            messages.append({"role": "user", "content": "Token usage: 10 of 1,000,000 tokens used for this stage."})
        wall = time.perf_counter() - t0
        gaps = _gaps(server.requests)
        client.close()
    return {"wall_s": wall, "turn_s": statistics.median(gaps)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="tb-bench-improof-") as tmp:
            direct = _direct(args.turns)
            harness = _harness(args.turns, Path(tmp))
        runs.append((harness, direct))
    h = {k: statistics.median(r[0][k] for r in runs) for k in runs[0][0]}
    d = {k: statistics.median(r[1][k] for r in runs) for k in runs[0][1]}
    ratio = h["turn_s"] / d["turn_s"]
    per_replayed = h["replay_wall_s"] / (args.turns + 1)
    print(f"turns    {args.turns} in the main stage, then 1 subquestion turn; median of {args.repeat} runs")
    print(f"direct   {d['turn_s'] * 1000:7.1f} ms/turn   ({d['wall_s']:.2f} s for {args.turns} calls)")
    print(f"harness  {h['turn_s'] * 1000:7.1f} ms/turn   ratio {ratio:5.2f}x   "
          f"(whole eval {h['wall_s']:.2f} s, start-up included)")  # fmt: skip
    print(f"replay   whole eval {h['replay_wall_s']:.2f} s, {per_replayed * 1000:.1f} ms per stored turn "
          "(start-up included), no model call")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"turns": args.turns, "repeat": args.repeat, "harness": h, "direct": d, "ratio": ratio}, f,
                      indent=2)  # fmt: skip


if __name__ == "__main__":
    main()
