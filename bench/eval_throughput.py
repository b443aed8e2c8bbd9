"""Throughput of the LLM layer against a latency-injecting loopback server.

N calls, each answered after L seconds by the fake server (run in its own
process so it does not share the client's GIL), at concurrency C. The ideal wall
time is N*L/C; each variant prints ideal/wall (1.0 = no overhead at all) and, in
the same run, the same figure for a plain thread pool over the synchronous
``openai`` SDK (the released LiveMathematicianBench scripts' approach).

Variants (each in a fresh subprocess, so peak RSS is per variant):
  theorembench   the LLM client as used by every stage (auto backend: direct
                 aiohttp path for OpenAI-compatible servers), store writes, cache
                 look-ups and usage accounting included
  inspect        the same client forced through Inspect AI's model API
  threadpool     ThreadPoolExecutor(C) over openai.OpenAI().chat.completions.create

Usage:  python bench/eval_throughput.py [--n 2000] [--latency-ms 200] [--c 16,64,256]
                                        [--variants theorembench,threadpool,inspect] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODEL = "openai-api/bench/m"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_theorembench(base_url: str, n: int, c: int, backend: str) -> dict:
    import asyncio

    from theorembench.llm import LLM, GenerateSettings
    from theorembench.store import Store

    os.environ["BENCH_BASE_URL"] = base_url
    os.environ["BENCH_API_KEY"] = "bench"
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        llm = LLM(store, backend=backend)
        settings = GenerateSettings(max_tokens=64, max_connections=c, max_retries=0)

        async def main() -> float:
            # one call before the clock: the backend is built and its imports done (inspect_ai's take about 1.7 s),
            # so the timed window holds the n calls only, as the thread pool's does
            await llm.generate(MODEL, [{"role": "user", "content": "warm-up"}], settings, purpose="bench-warm-up")
            t0 = time.perf_counter()
            calls = [llm.generate(MODEL, [{"role": "user", "content": f"question {i}"}], settings, purpose="bench")
                     for i in range(n)]  # fmt: skip
            results = await asyncio.gather(*calls)
            wall = time.perf_counter() - t0
            await llm.aclose()
            assert len(results) == n and all(r.text for r in results)
            return wall

        wall = asyncio.run(main())
        usage = store.usage()
        assert usage["calls"] == n + 1, usage  # the warm-up call and the n timed ones
        store.close()
    return {"wall_s": wall}


def run_threadpool(base_url: str, n: int, c: int) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key="bench", max_retries=0)

    def one(i: int) -> str:
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": f"question {i}"}], max_tokens=64
        )
        return reply.choices[0].message.content or ""

    one(-1)  # the same warm-up call as the other variants, before the clock
    with ThreadPoolExecutor(max_workers=c) as pool:
        t0 = time.perf_counter()
        results = list(pool.map(one, range(n)))
        wall = time.perf_counter() - t0
    assert len(results) == n and all(results)
    return {"wall_s": wall}


def child(args: argparse.Namespace) -> None:
    c = int(args.c)
    if args.variant == "threadpool":
        result = run_threadpool(args.base_url, args.n, c)
    else:
        backend = "inspect" if args.variant == "inspect" else "auto"
        result = run_theorembench(args.base_url, args.n, c, backend)
    result["peak_rss_mb"] = _peak_rss_mb()
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--c", default="16,64,256")
    parser.add_argument("--variants", default="theorembench,threadpool,inspect")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from rich.console import Console
    from rich.table import Table

    from theorembench.testing.fakellm import spawn

    console = Console()
    latency = args.latency_ms / 1000
    concurrencies = [int(x) for x in args.c.split(",")]
    variants = [v.strip() for v in args.variants.split(",")]
    rows = []
    server = spawn({"default": {"reply": "\\boxed{A}", "delay_ms": args.latency_ms}}, keep_bodies=False)
    try:
        for c in concurrencies:
            ideal = args.n * latency / c
            for variant in variants:
                server.reset()
                console.print(f"[dim]running {variant} at C={c} (ideal {ideal:.2f} s)...[/]")
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", "--variant", variant, "--n", str(args.n),
                     "--c", str(c), "--base-url", server.base_url],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                if proc.returncode != 0:
                    console.print(f"[red]{variant} C={c} failed:[/]\n{proc.stderr[-2000:]}")
                    continue
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                served = server.stats()["completed"]
                rows.append({"variant": variant, "c": c, "n": args.n, "latency_s": latency,
                             "ideal_s": ideal, "wall_s": result["wall_s"],
                             "ideal_over_wall": ideal / result["wall_s"],
                             "peak_rss_mb": result["peak_rss_mb"], "served": served})  # fmt: skip
    finally:
        server.stop()

    table = Table(title=f"N={args.n} calls, L={args.latency_ms} ms per call; ideal = N*L/C")
    for col in ("C", "variant", "ideal s", "wall s", "ideal/wall", "vs threadpool", "peak RSS MB"):
        table.add_column(col, justify="right")
    for row in rows:
        base = next((r for r in rows if r["c"] == row["c"] and r["variant"] == "threadpool"), None)
        versus = f"{base['wall_s'] / row['wall_s']:.2f}x" if base else ""
        row["speed_vs_threadpool"] = base["wall_s"] / row["wall_s"] if base else None
        table.add_row(str(row["c"]), row["variant"], f"{row['ideal_s']:.2f}", f"{row['wall_s']:.2f}",
                      f"{row['ideal_over_wall']:.3f}", versus, f"{row['peak_rss_mb']:.0f}")  # fmt: skip
    console.print(table)
    console.print("ideal/wall: 1.0 means the client adds nothing to the server's latency; "
                  "'vs threadpool' > 1 means faster than the thread pool.")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
