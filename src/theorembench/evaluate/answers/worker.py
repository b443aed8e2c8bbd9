"""The worker process that parses and compares answers under a memory and time limit.

Run as ``python -m theorembench.evaluate.answers.worker --memory-mb M --timeout S`` by
:class:`~theorembench.evaluate.answers.checker.AnswerChecker`: it caps its address space
(RLIMIT_AS), lifts Python's int/str digit limit, says ``{"ready": true}``, then answers one
JSON request per line with one JSON verdict per line. Each request runs under a wall-clock
alarm (an interruptible timeout) and a CPU-time limit just above it (SIGXCPU ends the worker
if a single C-level operation never returns); the parent also kills it on overrun.
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import sys
from typing import Any


class _Timeout(BaseException):  # not an Exception: no library code swallows it
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _failure(message: str) -> dict[str, Any]:
    return {"correct": None, "warning": "high", "messages": [message]}


def handle(request: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One judgement under the alarm and the CPU limit."""
    from theorembench.evaluate.answers.compare import Tolerance, judge

    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_cap = int(usage.ru_utime + usage.ru_stime + timeout) + 3
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_cap if hard == resource.RLIM_INFINITY else min(cpu_cap, hard), hard))
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        tol = Tolerance(rel=float(request.get("rel_tol", 1e-6)), abs=float(request.get("abs_tol", 1e-9)))
        return judge(request["expected"], request["candidates"], request.get("kind"), tol)
    except _Timeout:
        return _failure(f"timeout: not judged within {timeout:g} s")
    except MemoryError:
        return _failure("too large: out of memory")
    except RecursionError:
        return _failure("too large: nested too deeply")
    except Exception as exc:  # a bug or an odd sympy failure: an unjudged answer, never a crash
        return _failure(f"error: {type(exc).__name__}: {str(exc)[:200]}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-mb", type=int, default=1024)
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args(argv)
    limit = args.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.set_int_max_str_digits(0)
    sys.setrecursionlimit(5000)
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when this process ends
    import theorembench.evaluate.answers.compare  # noqa: F401  (sympy loads before "ready")

    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            result = _failure("error: unreadable request")
        else:
            result = handle(request, args.timeout)
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
