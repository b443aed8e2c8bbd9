"""Throughput of ``theorembench eternal instantiate`` on the Cayley-graph template, against a baseline in the same run.

  batch     ``instantiate_templates`` with N instances, what the command does: three sandboxed processes per
            template (the brute force, the formula on the small cases and every instance, the replay of every
            instance with another hash seed and each rounding mode), one child process per run inside them,
            and the checks on the host; instances per second end to end
  baseline  the same runs with one sandboxed process per instance and role (plus one for the brute force)
  ratio     baseline time / batch time (median of R interleaved runs each)

The template is the paper's §3.4 example in our format: a prime n, result 2^(n-1) (n-1)!, and a
brute force over the Cayley graph of S_n on its n-cycles for n = 3..6 (numpy eigenvalues).
Both sides include one tool manifest (a sandboxed run that lists the library versions), as the command does.

Usage:  python bench/eternal_instantiate.py [--n 50] [--repeat 3] [--quick] [--no-check] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from theorembench.methods.eternal.crosscheck import case_runs
from theorembench.methods.eternal.instantiate import draw, instantiate_templates, libraries
from theorembench.methods.eternal.runs import run_role
from theorembench.methods.eternal.template import parse_template
from theorembench.methods.eternal.verify import MODES
from theorembench.sandbox import probe

LIMITS = {"per_run_s": 20, "timeout_s": 120, "memory_mb": 2048}

BRUTE = """
import itertools
import numpy as np
perms = list(itertools.permutations(range(n)))
index = {p: i for i, p in enumerate(perms)}
def cycle_length_of_0(p):
    k, x = 1, p[0]
    while x != 0:
        k, x = k + 1, p[x]
    return k
cycles = [p for p in perms if cycle_length_of_0(p) == n]
adjacency = np.zeros((len(perms), len(perms)))
for u in perms:
    for a in cycles:
        adjacency[index[u], index[tuple(a[u[i]] for i in range(n))]] = 1
result = int(round(float(np.abs(np.linalg.eigvalsh(adjacency)).sum())))
"""


def cayley(max_prime: int, check: bool) -> dict:
    t = {"template_id": "cayley_graph_energy",
         "problem_template": "Let $\\Delta$ be the graph on $S_{n}$ in which $u$ and $v$ are adjacent when $v = a "
                             "\\circ u$ for some {n}-cycle $a$. Given that $n = {n}$ is prime, compute the energy "
                             "of $\\Delta$.",
         "natural_lang_solution": "1. The Cayley graph's spectrum follows from the characters of $S_{n}$ on the "
                                  "class of {n}-cycles.\n2. Summing the absolute values gives "
                                  "$2^{{n}-1} ({n}-1)!$.",
         "formal_solution": "import math\nresult = 2**(n-1) * math.factorial(n-1)\n", "output_type": "Integer",
         "params": {"n": {"type": "prime", "min": 5, "max": max_prime}},
         "validation_rule": [{"type": "value_check", "rule": "result > 0"}]}  # fmt: skip
    if check:
        t["small_case_check"] = {"params": {"n": [3, 4, 5, 6]}, "code": BRUTE}
    return t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="N=10, one repeat")
    ap.add_argument("--no-check", action="store_true", help="leave out the small-case check")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.quick:
        args.n, args.repeat = 10, 1
    max_prime = 400 if args.n <= 76 else 4000 if args.n <= 548 else 100_000
    template = parse_template(cayley(max_prime, not args.no_check))
    pr = probe()
    print(f"isolation: {pr.mode}, full={pr.full}: {' '.join(pr.layers)}")
    candidates, _ = draw(template, args.n, 0)

    def batch() -> None:
        res = instantiate_templates([template], args.n, 0)
        assert len(res.instances) == args.n, res.rejections[:3]

    def baseline() -> None:
        libraries()
        scc = template.small_case_check
        if scc is not None:
            brute = run_role("brute", scc.code, case_runs(template, scc.cases, "case", True), hash_seed=1, **LIMITS)
            assert all(r.ok for r in brute.runs.values())
        for c in candidates:
            params = {k: c[k] for k in template.params}
            first = run_role("formula", template.formal_solution, [{"id": "i", "params": params}], hash_seed=1,
                             **LIMITS)  # fmt: skip
            again = run_role("replay", template.formal_solution, [{"id": m, "params": params, "mode": m}
                             for m in MODES], hash_seed=2, **LIMITS)  # fmt: skip
            assert first.runs["i"].ok and all(r.ok for r in again.runs.values())

    walls: dict[str, list[float]] = {"batch": [], "baseline": []}
    for _ in range(args.repeat):
        for name, fn in (("batch", batch), ("baseline", baseline)):
            t0 = time.perf_counter()
            fn()
            walls[name].append(time.perf_counter() - t0)
    b, e = statistics.median(walls["batch"]), statistics.median(walls["baseline"])
    out = {"n": args.n, "check": not args.no_check, "isolation": pr.layers, "batch_s": b, "baseline_s": e,
           "batch_per_s": args.n / b, "baseline_per_s": args.n / e, "ratio": e / b}  # fmt: skip
    print(f"N={args.n} (small-case check {'on' if out['check'] else 'off'}): three sandboxed processes "
          f"{args.n / b:7.1f} instances/s ({b:.2f} s)   processes per instance {args.n / e:6.1f}/s ({e:.2f} s)   "
          f"ratio {e / b:5.1f}x")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
