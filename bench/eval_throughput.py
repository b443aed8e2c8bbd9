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

Sharded mode (after the table): the inspect variant in K processes at once (K in --shards, capped by
the CPU count), process i of K making the calls whose index is i mod K (``--shard i/K``) at
concurrency ceil(C/K), C the largest of --c, against the one server process. Each process warms up,
then all start together; the wall time runs from the first start to the last end (CLOCK_MONOTONIC,
one clock for every process). Prints calls/s, CPU milliseconds per call in the client processes, and
the speed-up against K=1 measured in the same run. Through Inspect one process is CPU-bound near
150 calls/s (about 6 ms of CPU a call), so sharding is how that path goes faster.

Usage:  python bench/eval_throughput.py [--n 2000] [--latency-ms 200] [--c 16,64,256]
                                        [--variants theorembench,threadpool,inspect] [--shards 1,2,4]
                                        [--json out.json]
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
from typing import Any

MODEL = "openai-api/bench/m"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_theorembench(base_url: str, n: int, c: int, backend: str, indices: list[int] | None = None,
                     gate: bool = False) -> dict:
    """``n`` calls (or those of ``indices``) at concurrency ``c``; with ``gate``, after the warm-up the process
    says READY on stdout and waits for a line on stdin before its clock starts."""
    import asyncio

    from theorembench.llm import LLM, GenerateSettings
    from theorembench.store import Store

    os.environ["BENCH_BASE_URL"] = base_url
    os.environ["BENCH_API_KEY"] = "bench"
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        llm = LLM(store, backend=backend)
        settings = GenerateSettings(max_tokens=64, max_connections=c, max_retries=0)

        todo = list(range(n)) if indices is None else indices

        async def main() -> dict:
            # one call before the clock: the backend is built and its imports done (inspect_ai's take about 1.7 s),
            # so the timed window holds the n calls only, as the thread pool's does
            await llm.generate(MODEL, [{"role": "user", "content": "warm-up"}], settings, purpose="bench-warm-up")
            if gate:
                print("READY", flush=True)
                await asyncio.to_thread(sys.stdin.readline)
            cpu0, start, t0 = _cpu_s(), time.monotonic(), time.perf_counter()
            calls = [llm.generate(MODEL, [{"role": "user", "content": f"question {i}"}], settings, purpose="bench")
                     for i in todo]  # fmt: skip
            results = await asyncio.gather(*calls)
            wall, end, cpu = time.perf_counter() - t0, time.monotonic(), _cpu_s() - cpu0
            await llm.aclose()
            assert len(results) == len(todo) and all(r.text for r in results)
            return {"wall_s": wall, "start": start, "end": end, "cpu_s": cpu, "calls": len(todo)}

        result = asyncio.run(main())
        usage = store.usage()
        assert usage["calls"] == len(todo) + 1, usage  # the warm-up call and the timed ones
        store.close()
    return result


def _cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def shard_indices(shard: str, n: int) -> list[int]:
    """The request indices of ``shard`` ("i/K"): those equal to i mod K, so the K shards partition range(n)."""
    i, k = (int(x) for x in shard.split("/"))
    if not 0 <= i < k:
        raise SystemExit(f"--shard {shard}: write i/K with 0 <= i < K")
    return list(range(i, n, k))


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
        cpu0, t0 = _cpu_s(), time.perf_counter()
        results = list(pool.map(one, range(n)))
        wall, cpu = time.perf_counter() - t0, _cpu_s() - cpu0
    assert len(results) == n and all(results)
    return {"wall_s": wall, "cpu_s": cpu}


def child(args: argparse.Namespace) -> None:
    c = int(args.c)
    if args.variant == "threadpool":
        result = run_threadpool(args.base_url, args.n, c)
    elif args.shard:
        result = run_theorembench(args.base_url, args.n, c, "inspect", shard_indices(args.shard, args.n), gate=True)
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
    parser.add_argument("--shards", default="1,2,4", help="process counts of the sharded inspect mode ('' skips it)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--shard", help=argparse.SUPPRESS)
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
                             "peak_rss_mb": result["peak_rss_mb"], "served": served,
                             "cpu_ms_per_call": 1000 * result["cpu_s"] / args.n})  # fmt: skip
        shard_rows = run_sharded(args, server, console)
    finally:
        server.stop()

    table = Table(title=f"N={args.n} calls, L={args.latency_ms} ms per call; ideal = N*L/C")
    for col in ("C", "variant", "ideal s", "wall s", "ideal/wall", "vs threadpool", "CPU ms/call", "peak RSS MB"):
        table.add_column(col, justify="right")
    for row in rows:
        base = next((r for r in rows if r["c"] == row["c"] and r["variant"] == "threadpool"), None)
        versus = f"{base['wall_s'] / row['wall_s']:.2f}x" if base else ""
        row["speed_vs_threadpool"] = base["wall_s"] / row["wall_s"] if base else None
        table.add_row(str(row["c"]), row["variant"], f"{row['ideal_s']:.2f}", f"{row['wall_s']:.2f}",
                      f"{row['ideal_over_wall']:.3f}", versus, f"{row['cpu_ms_per_call']:.1f}",
                      f"{row['peak_rss_mb']:.0f}")  # fmt: skip
    console.print(table)
    console.print("ideal/wall: 1.0 means the client adds nothing to the server's latency; "
                  "'vs threadpool' > 1 means faster than the thread pool.")  # fmt: skip
    print_sharded(shard_rows, args, console)
    if args.json:
        args.json.write_text(json.dumps({"variants": rows, "sharded": shard_rows}, indent=2))


def run_sharded(args: argparse.Namespace, server: Any, console: Any) -> list[dict]:
    """The inspect variant in K processes at once for each K of --shards (capped by the CPU count)."""
    cpus = os.cpu_count() or 1
    wanted = [int(x) for x in args.shards.split(",") if x.strip()]
    shards = sorted({min(k, cpus) for k in wanted if k >= 1})
    c = max(int(x) for x in args.c.split(","))
    rows = []
    for k in shards:
        server.reset()
        console.print(f"[dim]running inspect in {k} process(es), C={c} in all...[/]")
        procs = [subprocess.Popen([sys.executable, __file__, "--child", "--variant", "inspect", "--n", str(args.n),
                                   "--c", str(-(-c // k)), "--base-url", server.base_url,
                                   "--shard", f"{i}/{k}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True) for i in range(k)]  # fmt: skip
        try:
            results = _run_together(procs, k)
        finally:
            for proc in procs:  # a shard that failed leaves none of the others waiting
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        calls = sum(r["calls"] for r in results)
        assert calls == args.n, (calls, args.n)  # the shards partition the n calls
        served = server.stats()["completed"]
        assert served == args.n + k, served  # every call reached the server once, with one warm-up per process
        wall = max(r["end"] for r in results) - min(r["start"] for r in results)
        rows.append({"processes": k, "c_total": c, "n": calls, "wall_s": wall, "calls_per_s": calls / wall,
                     "cpu_ms_per_call": 1000 * sum(r["cpu_s"] for r in results) / calls})  # fmt: skip
    for row in rows:
        row["speed_vs_one"] = row["calls_per_s"] / rows[0]["calls_per_s"] if rows and rows[0]["processes"] == 1 \
            else None  # fmt: skip
    return rows


def _run_together(procs: list[subprocess.Popen], k: int) -> list[dict]:
    """Every process warmed up (it says READY), then all let go at once; their results."""
    for proc in procs:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "READY":
                break
        else:
            raise SystemExit(f"a shard of K={k} ended before it was ready (exit {proc.wait()})")
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a shard of K={k} failed (exit {proc.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def print_sharded(rows: list[dict], args: argparse.Namespace, console: Any) -> None:
    if not rows:
        return
    from rich.table import Table

    ideal = max(int(x) for x in args.c.split(",")) / (args.latency_ms / 1000)
    table = Table(title=f"inspect sharded over K processes: N={args.n} calls, L={args.latency_ms} ms, "
                        f"C={rows[0]['c_total']} in all (ideal {ideal:.0f} calls/s); {os.cpu_count()} CPUs")
    for col in ("K", "wall s", "calls/s", "CPU ms/call", "vs K=1"):
        table.add_column(col, justify="right")
    for row in rows:
        versus = f"{row['speed_vs_one']:.2f}x" if row["speed_vs_one"] is not None else ""
        table.add_row(str(row["processes"]), f"{row['wall_s']:.2f}", f"{row['calls_per_s']:.0f}",
                      f"{row['cpu_ms_per_call']:.1f}", versus)  # fmt: skip
    console.print(table)
    console.print("vs K=1: calls/s against one process in this run; the server runs in its own process on the "
                  "same CPUs, so K processes gain at most the CPUs left to them.")


if __name__ == "__main__":
    main()
