"""Cost of the sandbox (theorembench.sandbox), against the same work without it, in one run.

  startup   one run of ``python -c pass``: sandboxed / plain subprocess (median of R runs)
  sympy     one run of ``python -c "import sympy"``: sandboxed / plain subprocess
  batch     N evaluations (a sympy integral and factorisation each), instances per second when
            all N run in one sandboxed process, against one sandboxed process each

Usage:  python bench/sandbox.py [--repeat 10] [--n 40] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from theorembench.sandbox import probe, run_sandboxed

EVAL = "sp.factorint({i} * 1000003 + 7); sp.integrate(sp.sin(x) ** {k}, x)"


def _median_walls(fns, repeat: int) -> list[float]:
    """Median wall time of each function, the functions interleaved so that machine load hits them alike."""
    walls: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            walls[i].append(time.perf_counter() - t0)
    return [statistics.median(w) for w in walls]


def _plain(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def _boxed(code: str) -> None:
    res = run_sandboxed(["python", "-c", code], timeout_s=120)
    assert res.ok, res.stderr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--json")
    args = ap.parse_args()
    pr = probe()
    print(f"isolation: {pr.mode}, full={pr.full}: {' '.join(pr.layers)}")
    out: dict = {"isolation": pr.layers}
    for name, code in (("startup", "pass"), ("sympy", "import sympy")):
        plain, boxed = _median_walls([lambda: _plain(code), lambda: _boxed(code)], args.repeat)
        out[name] = {"plain_s": plain, "sandboxed_s": boxed, "ratio": boxed / plain}
        print(f"{name:8s} plain {plain * 1000:7.1f} ms   sandboxed {boxed * 1000:7.1f} ms   ratio {boxed / plain:5.2f}x")
    head = "import sympy as sp\nx = sp.symbols('x')\n"
    evals = [EVAL.format(i=i, k=2 + i % 4) for i in range(args.n)]
    t0 = time.perf_counter()
    _boxed(head + "\n".join(evals))
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    for e in evals:
        _boxed(head + e)
    each = time.perf_counter() - t0
    out["batch"] = {"n": args.n, "one_process_per_s": args.n / one, "process_each_per_s": args.n / each,
                    "ratio": each / one}  # fmt: skip
    print(f"batch    N={args.n}: one sandboxed process {args.n / one:7.1f}/s   one each {args.n / each:6.1f}/s   "
          f"ratio {each / one:5.1f}x")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
