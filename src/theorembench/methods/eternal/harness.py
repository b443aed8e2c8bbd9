"""The program that runs one role of a template's code inside the sandbox, and returns values as data only.

Standard library only, nothing of theorembench (the package is not mounted in the sandbox). Usage:
``python -s -P harness.py JOB`` with the key for signing on standard input. JOB is a JSON file::

    {"role": "formula" | "brute" | "replay", "code": "...", "per_run_s": 20, "preload": ["sympy", ...],
     "runs": [{"id": "case0", "params": {...}, "mode": "nearest" | "upward" | "downward", "required": true,
               "group": "inst0"}],
     "extend": {"runs": [...], "budget_s": 2.0} or null}

Parameters are JSON values, with ``{"$fraction": "p/q"}`` for a Fraction and ``{"$tuple": [...]}`` for a
tuple. Three kinds of process, so that the code can neither see nor change what is reported:

- the **reporter** (this program's first process) is not dumpable, so no other process of the sandbox
  can open its files or memory through ``/proc``. It starts the supervisor *before* it reads the key,
  so no process that ever runs code holds the key; then it signs each line the supervisor hands it
  (HMAC-SHA256 over a sequence number and the line) and writes it to standard output. The host keeps
  only lines whose signature and sequence number are right, so a line written by anyone else, or one
  taken out of the stream, is noticed.
- the **supervisor** (not dumpable either) loads the job, imports the heavy libraries the code imports
  (so each run does not pay for it), and runs every run in a **fresh child process** (``fork``): the
  child gets the parameters, sets the floating-point rounding mode of its run, runs the code, and
  writes its result, encoded as JSON data, to a pipe; it holds no other file of the supervisor. The
  supervisor kills a child (its whole process group) at ``per_run_s``, which no code can ignore.
  The rounding mode is the processor's (``fesetround``) and, in the same direction, that of the
  floating point done in software (``decimal``, ``mpmath``, sympy's ``Float``).
- the **children** run the code. A child that fails, exits or is killed costs its own run only.

A ``required`` run that does not give a value stops the role (the template is rejected anyway), and
one that fails in a ``group`` skips the rest of its group (the same instance in other modes). In
the brute-force role, the ``extend`` runs follow while their expected time fits the budget: each one
is predicted from the growth of the time of the runs before it, and stops at the first failure.
Lines: ``{"kind": "hello"|"start"|"run"|"stop"|"done"|"end", ...}``.
"""

import ctypes
import decimal  # noqa: F401  (loaded before any run: its rounding is set per run)
import hashlib
import hmac
import json
import os
import select
import signal
import sys
import time
from fractions import Fraction

PR_SET_DUMPABLE = 4
PRELOAD = ("sympy", "numpy", "scipy", "mpmath", "networkx")
MAX_RESULT_BYTES = 4_000_000
MAX_TEXT = 400_000
_ROUNDING = {"x86_64": {"nearest": 0, "downward": 0x400, "upward": 0x800},
             "aarch64": {"nearest": 0, "upward": 0x400000, "downward": 0x800000}}  # fmt: skip
_LIBC = ctypes.CDLL(None, use_errno=True)


def _libm():
    for name in ("libm.so.6", None):
        try:
            lib = ctypes.CDLL(name)
            lib.fesetround.argtypes = [ctypes.c_int]
            return lib
        except (OSError, AttributeError):
            continue
    return None


_LIBM = _libm()


def _soft_rounding(mode):
    """The same direction for the floating point done in software: decimal, mpmath and sympy's Floats."""
    letter, name = {"nearest": ("n", "ROUND_HALF_EVEN"), "upward": ("c", "ROUND_CEILING"),
                    "downward": ("f", "ROUND_FLOOR")}[mode]  # fmt: skip
    decimal = sys.modules["decimal"]
    decimal.getcontext().rounding = decimal.DefaultContext.rounding = getattr(decimal, name)
    mp = getattr(sys.modules.get("mpmath"), "mp", None)
    if isinstance(getattr(mp, "_prec_rounding", None), list):  # mpmath's context: [precision, rounding]
        mp._prec_rounding[1] = letter
    for module in ("sympy.core.numbers", "sympy.core.evalf"):  # both round with a module-level "rnd"
        if getattr(sys.modules.get(module), "rnd", None) in ("n", "c", "f"):
            sys.modules[module].rnd = letter


def set_rounding(mode):
    """Set this process's rounding mode; True when a test of the arithmetic shows it in force."""
    try:
        _soft_rounding(mode)
    except Exception:  # a library of another shape: its rounding stays as it is
        pass
    table = _ROUNDING.get(os.uname().machine)
    if _LIBM is None or table is None or _LIBM.fesetround(table[mode]) != 0:
        return False
    one, tiny = float("1"), float("1e-300")  # values built at run time: nothing is folded at compile time
    up, down = one + tiny > one, one - tiny < one
    return (up, down) == {"nearest": (False, False), "upward": (True, False), "downward": (False, True)}[mode]


def _short(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- the child: run the code once, encode its result ------------------------------------------------


def _decode(value):
    if isinstance(value, dict) and "$fraction" in value:
        return Fraction(value["$fraction"])
    if isinstance(value, dict) and "$tuple" in value:
        return tuple(_decode(v) for v in value["$tuple"])
    return value


def _sympy_value(value, sp):
    """A sympy object as data: exact numbers and truth values as such, sets and tuples item by item."""
    if isinstance(value, sp.Poly):  # PurePoly(x**2 - 1, x, domain='ZZ') is the expression x**2 - 1
        value = value.as_expr()
    if value is sp.true or value is sp.false:
        return {"t": "bool", "v": bool(value)}
    if getattr(value, "is_Integer", False):
        return {"t": "int", "v": str(int(value))}
    if getattr(value, "is_Rational", False):
        return {"t": "frac", "v": "%d/%d" % (int(value.p), int(value.q))}
    if getattr(value, "is_Float", False):
        return {"t": "float", "v": str(value)}
    if isinstance(value, sp.FiniteSet):
        return {"t": "set", "items": [encode(v) for v in value.args]}
    if isinstance(value, sp.Tuple):
        return {"t": "tuple", "items": [encode(v) for v in value.args]}
    text, latex = sp.sstr(value), sp.latex(value)
    if isinstance(value, sp.Interval):  # as it is written: [0, 1), not Interval.Ropen(0, 1)
        text = "%s%s, %s%s" % ("(" if value.left_open else "[", sp.sstr(value.start), sp.sstr(value.end),
                               ")" if value.right_open else "]")  # fmt: skip
    if len(text) > MAX_TEXT or len(latex) > MAX_TEXT:
        raise ValueError("the result's text has more than %d characters" % MAX_TEXT)
    return {"t": "expr", "text": text, "latex": latex, "float": bool(value.has(sp.Float))}


def encode(value):
    """The result as JSON data: numbers, truth values, text, sympy expressions (text and LaTeX), collections."""
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int):
        return {"t": "int", "v": str(value)}
    if isinstance(value, Fraction):
        return {"t": "int", "v": str(value)} if value.denominator == 1 else {"t": "frac", "v": str(value)}
    if isinstance(value, float):
        return {"t": "float", "v": repr(value)}
    if isinstance(value, complex):
        return {"t": "complex", "v": repr(value)}
    if isinstance(value, str):
        return {"t": "str", "v": value}
    if isinstance(value, tuple | list | set | frozenset):
        kind = "tuple" if isinstance(value, tuple) else "list" if isinstance(value, list) else "set"
        return {"t": kind, "items": [encode(v) for v in value]}
    sp = sys.modules.get("sympy")
    if sp is not None and isinstance(value, sp.Basic | sp.Poly):
        return _sympy_value(value, sp)
    dtype = getattr(value, "dtype", None)
    if dtype is not None and getattr(value, "shape", None) == () and getattr(dtype, "kind", "") in "iubfc":
        return encode(value.item())  # a numpy scalar
    raise TypeError("result is a %s, not a number, expression, boolean, tuple, list or set" % type(value).__name__)


def _child(code, params, mode, wfd):
    """Runs in a fresh process: the code once, then its result (or why there is none) as JSON on ``wfd``."""
    os.setpgid(0, 0)
    _LIBC.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # its own /proc entries behave as usual
    os.closerange(3, wfd)
    os.closerange(wfd + 1, 1 << 16)
    mode_ok = set_rounding(mode)
    ns = {"__name__": "__eternal__", "__builtins__": __builtins__}
    ns.update(params)
    try:
        try:
            exec(code, ns)
        finally:
            set_rounding("nearest")
        result = ns.get("result")
        expr = ns.get("exact_expression")
        if result is None:
            report = {"error": "the code did not set result"}
        else:
            report = {"value": encode(result), "exact_expression": expr[:2000] if isinstance(expr, str) else ""}
    except MemoryError:
        report = {"error": "MemoryError (memory limit)"}
    except SystemExit as exc:
        report = {"error": "SystemExit(%s)" % _short(exc.code, 60)}
    except BaseException as exc:  # the code's own failure, whatever it is
        report = {"error": "%s: %s" % (type(exc).__name__, _short(exc))}
    report["mode_ok"] = mode_ok
    try:
        data = json.dumps(report).encode()
    except (ValueError, RecursionError) as exc:
        data = json.dumps({"error": "the result cannot be written as data: %s" % _short(exc), "mode_ok": mode_ok})
        data = data.encode()
    view = memoryview(data)
    while view:
        view = view[os.write(wfd, view) :]
    os._exit(0)


# -- the supervisor: one child per run, with a limit no code can ignore -----------------------------


def _wait_child(pid, rfd, limit_s):
    """Read the child's report until it exits or ``limit_s`` passes: ``(data, status, rusage, timed_out, too_big)``."""
    deadline = time.monotonic() + limit_s
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    data, open_pipe, exited, too_big, timed_out = bytearray(), True, None, False, False
    while exited is None and not too_big:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        watch = ([rfd] if open_pipe else []) + ([pidfd] if pidfd is not None else [])
        ready = select.select(watch, [], [], left if pidfd is not None else min(left, 0.05))[0] if watch else []
        if rfd in ready:
            chunk = os.read(rfd, 1 << 16)
            open_pipe = bool(chunk)
            data += chunk
            too_big = len(data) > MAX_RESULT_BYTES
        if pidfd is None or pidfd in ready:
            done, status, ru = os.wait4(pid, os.WNOHANG)
            if done:
                exited = (status, ru)
    for kill in (os.killpg, os.kill):  # the child, and whatever it started in its process group
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if exited is None:
        _, status, ru = os.wait4(pid, 0)
        exited = (status, ru)
    os.set_blocking(rfd, False)
    try:
        while not too_big and (chunk := os.read(rfd, 1 << 16)):
            data += chunk
            too_big = len(data) > MAX_RESULT_BYTES
    except BlockingIOError:
        pass
    if pidfd is not None:
        os.close(pidfd)
    return bytes(data), exited[0], exited[1], timed_out, too_big


def run_once(code, run, limit_s):
    """One run in a fresh child process: the line that reports it."""
    params = {k: _decode(v) for k, v in run["params"].items()}
    rfd, wfd = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rfd)
            _child(code, params, run.get("mode", "nearest"), wfd)
        finally:
            os._exit(70)
    os.close(wfd)
    try:
        os.setpgid(pid, pid)  # also here, so that the group exists before any kill
    except OSError:
        pass
    try:
        data, status, ru, timed_out, too_big = _wait_child(pid, rfd, limit_s)
    finally:
        os.close(rfd)
    line = {"kind": "run", "id": run["id"], "mode": run.get("mode", "nearest"),
            "wall_s": round(time.perf_counter() - t0, 6), "cpu_s": round(ru.ru_utime + ru.ru_stime, 6)}  # fmt: skip
    report = None
    if data and not too_big:
        try:
            report = json.loads(data)
        except (ValueError, RecursionError):  # cut short by the kill
            report = None
    if too_big:
        line.update(status="error", error="the result is larger than %d bytes" % MAX_RESULT_BYTES)
    elif timed_out and not isinstance(report, dict):
        line.update(status="timeout", error="no result within %g s" % limit_s)
    elif not isinstance(report, dict):
        code = os.waitstatus_to_exitcode(status)
        how = "signal %d" % -code if code < 0 else "exit %d" % code
        line.update(status="error", error="the run ended without a result (%s)" % how)
    elif "value" in report:
        line.update(status="ok", value=report["value"], exact_expression=report.get("exact_expression", ""),
                    mode_ok=report.get("mode_ok") is True)  # fmt: skip
    else:
        line.update(status="error", error=_short(report.get("error", "no result")),
                    mode_ok=report.get("mode_ok") is True)  # fmt: skip
    return line


def supervise(job, emit):
    code = compile(job["code"], "<%s>" % job.get("role", "code"), "exec")
    for name in job.get("preload", []):
        if name in PRELOAD:
            try:
                __import__(name)
            except Exception:  # the child reports the failure of its own import
                pass
    limit_s = float(job.get("per_run_s", 20))
    times, failed = [], set()
    for run in job["runs"]:
        if run.get("group") in failed:
            continue
        emit({"kind": "start", "id": run["id"]})
        line = run_once(code, run, limit_s)
        emit(line)
        times.append(line["wall_s"])
        if line["status"] != "ok" and run.get("group"):
            failed.add(run["group"])
        if run.get("required") and line["status"] != "ok":
            emit({"kind": "stop", "id": run["id"]})
            return
    extend = job.get("extend") or {}
    left = float(extend.get("budget_s", 0))
    for run in extend.get("runs", []):
        last, before = (times[-1], times[-2]) if len(times) > 1 else (times[-1] if times else 0.0, 0.0)
        guess = last * max(1.0, last / before) if before > 0 else last
        if guess > left or left <= 0:
            break
        emit({"kind": "start", "id": run["id"]})
        line = run_once(code, run, min(limit_s, left))
        emit(line)
        left -= line["wall_s"]
        times.append(line["wall_s"])
        if line["status"] != "ok":
            break
    emit({"kind": "done"})


def _supervisor(path, out_fd, go_fd):
    _LIBC.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.read(go_fd, 1)  # the reporter has read the key: now code may run
    os.close(go_fd)
    out = os.fdopen(out_fd, "w", encoding="utf-8")

    def emit(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    try:
        with open(path, encoding="utf-8") as fh:
            job = json.load(fh)
        emit({"kind": "hello", "role": job.get("role"), "rounding": _LIBM is not None
              and os.uname().machine in _ROUNDING})  # fmt: skip
        supervise(job, emit)
    except Exception as exc:
        emit({"kind": "fail", "error": "%s: %s" % (type(exc).__name__, _short(exc))})
    out.close()


def main():
    if _LIBC.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        sys.exit("harness: cannot make the reporter non-dumpable (errno %d)" % ctypes.get_errno())
    lines_r, lines_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(lines_r)
            os.close(go_w)
            _supervisor(sys.argv[1], lines_w, go_r)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(lines_w)
    os.close(go_r)
    key = b""
    while chunk := os.read(0, 4096):
        key += chunk
    key = key.strip()
    os.write(go_w, b"g")
    os.close(go_w)
    seq = 0

    def sign(text):
        nonlocal seq
        seq += 1
        mac = hmac.new(key, ("%d\t%s" % (seq, text)).encode(), hashlib.sha256).hexdigest()
        sys.stdout.write("%d\t%s\t%s\n" % (seq, mac, text))
        sys.stdout.flush()

    with os.fdopen(lines_r, encoding="utf-8") as lines:
        for text in lines:
            sign(text.rstrip("\n"))
    _, status = os.waitpid(pid, 0)
    sign(json.dumps({"kind": "end", "supervisor_exit": os.waitstatus_to_exitcode(status)}))


if __name__ == "__main__":
    main()
