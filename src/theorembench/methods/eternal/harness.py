"""The program that runs a template's code inside the sandbox: one process per template.

Standard library only, nothing of theorembench (the package is not mounted in the sandbox); sympy
and numpy are used only when the template's code has imported them. Usage: ``python harness.py JOB``
where JOB is a JSON file::

    {"code": formal_solution, "instances": [params, ...], "per_instance_s": 20,
     "check": {"code": brute force, "cases": [params, ...]} or null}

Parameters are JSON values, with ``{"$fraction": "p/q"}`` for a Fraction and ``{"$tuple": [...]}``
for a tuple. The small-case check runs first, one case at a time (the formula, then the brute force),
and stops at the first case that does not agree; only when every case agrees do the instances run.
Each instance runs the formula twice in fresh namespaces (determinism). Every run has its own time
limit (``per_instance_s``, a real-time timer), so code that never ends costs one instance, not the
batch. One JSON line per event goes to the original standard output; the code's own printing is
discarded. Lines: ``{"kind": "case"|"start"|"instance"|"skip"|"done", ...}``.
"""

import io
import json
import math
import os
import signal
import sys
import time
from fractions import Fraction


class _Timeout(BaseException):
    """Raised by the timer; a BaseException so that ``except Exception`` in the code does not swallow it."""


def _on_alarm(signum, frame):
    raise _Timeout()


def _decode(value):
    if isinstance(value, dict) and "$fraction" in value:
        return Fraction(value["$fraction"])
    if isinstance(value, dict) and "$tuple" in value:
        return tuple(_decode(v) for v in value["$tuple"])
    return value


def _sympy_basic():
    sp = sys.modules.get("sympy")
    return getattr(sp, "Basic", None) if sp is not None else None


def exact(value):
    """``(text, type, exact)`` of a result: ints in full, rationals p/q, sympy via str, floats inexact."""
    if isinstance(value, bool):
        return str(value), "bool", True
    if isinstance(value, int):
        return str(value), "int", True
    if isinstance(value, Fraction):
        return str(value), "int" if value.denominator == 1 else "rational", True
    if isinstance(value, float):
        return repr(value), "float", False
    if isinstance(value, complex):
        return repr(value), "complex", False
    basic = _sympy_basic()
    if basic is not None and isinstance(value, basic):
        if getattr(value, "is_Integer", False):
            return str(int(value)), "int", True
        if getattr(value, "is_Rational", False):
            return str(Fraction(int(value.p), int(value.q))), "rational", True
        if value in (sys.modules["sympy"].true, sys.modules["sympy"].false):
            return str(bool(value)), "bool", True
        if getattr(value, "is_Float", False):
            return str(value), "float", False
        return str(value), "expression", True
    dtype = getattr(value, "dtype", None)
    if dtype is not None and getattr(value, "shape", None) == ():  # a numpy scalar
        kind = getattr(dtype, "kind", "")
        if kind in "iu":
            return str(int(value)), "int", True
        if kind == "b":
            return str(bool(value)), "bool", True
        if kind == "f":
            return repr(float(value)), "float", False
    if isinstance(value, tuple | list | set | frozenset):
        parts = [exact(v) for v in value]
        texts = [p[0] for p in parts]
        if isinstance(value, set | frozenset):
            text = "{" + ", ".join(sorted(texts)) + "}"
        elif isinstance(value, list):
            text = "[" + ", ".join(texts) + "]"
        else:
            text = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
        kind = "tuple" if isinstance(value, tuple) else "list" if isinstance(value, list) else "set"
        return text, kind, all(p[2] for p in parts)
    if isinstance(value, str):
        return value, "str", True
    raise TypeError("result is a %s, not a number, expression, boolean, tuple, list or set" % type(value).__name__)


def _number(value):
    """A Python number for a numeric result (int, Fraction, float), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | Fraction | float):
        return value
    basic = _sympy_basic()
    if basic is not None and isinstance(value, basic) and getattr(value, "is_number", False):
        if getattr(value, "is_Rational", False):
            return Fraction(int(value.p), int(value.q))
        if getattr(value, "is_real", False):
            return float(value)
    dtype = getattr(value, "dtype", None)
    if dtype is not None and getattr(value, "shape", None) == () and getattr(dtype, "kind", "") in "iuf":
        return value.item()
    return None


def agree(a, b):
    """Whether two results agree: the same exact text, numbers equal (within 1e-9 relative when one is a float),
    or, when sympy is loaded, a difference that simplifies to zero; tuples and lists item by item."""
    ta, tb = exact(a), exact(b)
    if ta[0] == tb[0]:
        return True
    na, nb = _number(a), _number(b)
    if na is not None and nb is not None:
        if isinstance(na, float) or isinstance(nb, float):
            return math.isclose(float(na), float(nb), rel_tol=1e-9, abs_tol=1e-9)
        return na == nb
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(agree(x, y) for x, y in zip(a, b))
    basic = _sympy_basic()
    if basic is not None and (isinstance(a, basic) or isinstance(b, basic)):
        sp = sys.modules["sympy"]
        try:
            return sp.simplify(sp.sympify(a) - sp.sympify(b)) == 0
        except Exception:
            return False
    return False


def _short(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def run(code, params, limit_s):
    """Execute ``code`` with ``params`` bound and take the exact form of its ``result``, under the time limit.

    Returns ``(status, detail, wall_s, cpu_s)``: status "ok" with detail ``(result, exact form, exact_expression)``,
    or "timeout" / "error" with detail a one-line reason.
    """
    ns = {"__name__": "__eternal__", "__builtins__": __builtins__}
    ns.update(params)
    keep = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        signal.setitimer(signal.ITIMER_REAL, limit_s)
        try:
            exec(code, ns)
            result = ns.get("result")
            form = exact(result) if result is not None else None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if form is None:
            status, detail = "error", "the code did not set result"
        else:
            expr = ns.get("exact_expression")
            status, detail = "ok", (result, form, expr if isinstance(expr, str) else "")
    except _Timeout:
        status, detail = "timeout", "no result within %g s" % limit_s
    except MemoryError:
        status, detail = "error", "MemoryError (memory limit)"
    except SystemExit as exc:
        status, detail = "error", "SystemExit(%s)" % _short(exc.code, 60)
    except BaseException as exc:  # the code's own failure, whatever it is
        status, detail = "error", "%s: %s" % (type(exc).__name__, _short(exc))
    finally:
        sys.stdout, sys.stderr = keep
    return status, detail, time.perf_counter() - t0, time.process_time() - c0


def _emit(out, obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()


def _agree_timed(a, b, limit_s):
    try:
        signal.setitimer(signal.ITIMER_REAL, limit_s)
        try:
            return agree(a, b), None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except (_Timeout, Exception) as exc:
        return False, "comparison failed: " + (_short(exc) or type(exc).__name__)


def check_cases(out, check, code, limit_s):
    """The small-case check; returns True when every case agrees (it stops at the first that does not)."""
    brute = compile(check["code"], "<small_case_check>", "exec")
    for i, raw in enumerate(check["cases"]):
        params = {k: _decode(v) for k, v in raw.items()}
        line = {"kind": "case", "index": i, "params": raw}
        st1, d1, _, _ = run(code, params, limit_s)
        st2, d2, _, _ = run(brute, params, limit_s) if st1 == "ok" else (None, None, 0, 0)
        if st1 != "ok":
            line.update(status="formula_" + st1, error=d1)
        elif st2 != "ok":
            line.update(status="check_" + st2, error=d2)
        else:
            same, why = _agree_timed(d1[0], d2[0], limit_s)
            line.update(status="agree" if same else "disagree", formula=d1[1][0][:2000], check=d2[1][0][:2000])
            if why:
                line["error"] = why
        _emit(out, line)
        if line["status"] != "agree":
            return False
    return True


def run_instance(out, i, code, raw, limit_s):
    """One instance: two runs in fresh namespaces, then one line with the exact value or why there is none."""
    params = {k: _decode(v) for k, v in raw.items()}
    _emit(out, {"kind": "start", "index": i})
    line = {"kind": "instance", "index": i}
    st1, d1, w1, c1 = run(code, params, limit_s)
    line.update(wall_s=round(w1, 6), cpu_s=round(c1, 6))
    if st1 != "ok":
        line.update(status=st1, error=d1)
        return _emit(out, line)
    st2, d2, w2, c2 = run(code, params, limit_s)
    line.update(wall_s=round(w1 + w2, 6), cpu_s=round(c1 + c2, 6))
    if st2 != "ok" or d2[1] != d1[1]:
        second = d2[1][0] if st2 == "ok" else "%s (%s)" % (st2, d2)
        line.update(status="nondeterministic", first=d1[1][0][:200], second=second[:200])
        return _emit(out, line)
    value, typ, is_exact = d1[1]
    line.update(status="ok", value=value, type=typ, exact=is_exact, exact_expression=d1[2])
    _emit(out, line)


def main():
    with open(sys.argv[1], encoding="utf-8") as fh:
        job = json.load(fh)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")  # results go here; the code's fd 1 goes nowhere
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    signal.signal(signal.SIGALRM, _on_alarm)
    limit_s = float(job.get("per_instance_s", 20))
    code = compile(job["code"], "<formal_solution>", "exec")
    if job.get("check") and not check_cases(out, job["check"], code, limit_s):
        _emit(out, {"kind": "skip", "reason": "cross_check"})
        return
    for i, raw in enumerate(job["instances"]):
        run_instance(out, i, code, raw, limit_s)
    _emit(out, {"kind": "done"})


if __name__ == "__main__":
    main()
