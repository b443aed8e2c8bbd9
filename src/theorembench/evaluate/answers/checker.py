"""The answer checker: extraction here, parsing and comparison in a limited worker process.

One worker serves many checks (``check_many``, or an :class:`AnswerChecker` kept open), so
sympy loads once. Each check gets ``timeout`` seconds inside the worker (an alarm); if the
worker has not answered ``grace`` seconds later it is killed with its process group and the
verdict says timeout; a worker that dies (out of memory) is replaced for the next check.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.evaluate.answers.extract import expected_answer, extract_answer
from theorembench.evaluate.answers.normalize import KINDS, guess_kind
from theorembench.evaluate.answers.verdict import Verdict

MAX_REPLY_CHARS = 2_000_000
SHOW_EXTRACTED = 2_000
STARTUP_SECONDS = 120.0


class _WorkerGone(Exception):
    pass


class AnswerChecker:
    """Checks answers against expected ones; use as a context manager (or call :meth:`close`)."""

    def __init__(self, *, timeout: float = 5.0, memory_mb: int = 1024, rel_tol: float = 1e-6, abs_tol: float = 1e-9,
                 grace: float = 2.0) -> None:  # fmt: skip
        if timeout <= 0 or memory_mb < 256 or rel_tol < 0 or abs_tol < 0:
            raise UserError("answer checker: timeout > 0, memory >= 256 MB and tolerances >= 0 are needed")
        self.timeout, self.memory_mb, self.grace = timeout, memory_mb, grace
        self.rel_tol, self.abs_tol = rel_tol, abs_tol
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""

    # -- the worker
    def _start(self) -> subprocess.Popen[bytes]:
        root = str(Path(__file__).resolve().parents[3])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        cmd = [sys.executable, "-m", "theorembench.evaluate.answers.worker", "--memory-mb", str(self.memory_mb),
               "--timeout", str(self.timeout)]  # fmt: skip
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env, start_new_session=True)  # fmt: skip
        self._proc, self._buffer = proc, b""
        try:
            ready = self._read_line(STARTUP_SECONDS)
        except _WorkerGone:
            ready = None
        if not ready or not json.loads(ready).get("ready"):
            self.close()
            raise UserError("the answer checker's worker did not start: is sympy installed (pip install sympy)?")
        return proc

    def _read_line(self, seconds: float) -> bytes | None:
        """One line from the worker, None after ``seconds``; :class:`_WorkerGone` when it closed its output."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _WorkerGone()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        proc = self._proc if self._proc and self._proc.poll() is None else self._start()
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
            line = self._read_line(self.timeout + self.grace)
        except (BrokenPipeError, _WorkerGone):
            self.close()
            return {"correct": None, "warning": "high", "messages": ["too large: the worker died (out of memory?)"]}
        if line is None:
            self.close()
            return {"correct": None, "warning": "high", "messages": [f"timeout: killed after {self.timeout:g} s"]}
        return json.loads(line)

    def close(self) -> None:
        """End the worker (its whole process group)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for stream in (proc.stdin, proc.stdout):
            if stream:
                try:
                    stream.close()
                except OSError:
                    pass
        proc.wait()

    def __enter__(self) -> AnswerChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- checks
    def check(self, expected: str, reply: str, kind: str | None = None) -> Verdict:
        """The verdict on ``reply`` (a full reply or a bare answer) against ``expected``."""
        if kind is not None and kind not in KINDS:
            raise UserError(f"unknown answer kind {kind!r}: use one of {', '.join(KINDS)}")
        if len(reply) > MAX_REPLY_CHARS or len(expected) > MAX_REPLY_CHARS:
            return Verdict(None, kind or "unknown", "high", [f"too large: over {MAX_REPLY_CHARS} characters"])
        given, kind = kind, kind or guess_kind(expected_answer(expected)[0])
        found = extract_answer(reply, sentences=kind != "boolean")
        verdict = Verdict(None, kind, source=found.source)
        if found.text is not None:
            verdict.extracted = found.text if len(found.text) <= SHOW_EXTRACTED else found.text[:SHOW_EXTRACTED] + "..."
        for message in found.messages:
            verdict.warn(message, "high" if found.text is None else "low")
        if found.text is None:
            return verdict
        result = self._ask({"expected": expected, "candidates": [found.text], "kind": given, "rel_tol": self.rel_tol,
                            "abs_tol": self.abs_tol})  # fmt: skip
        verdict.correct = result.get("correct")
        verdict.kind = result.get("kind", kind)
        verdict.expected, verdict.answer = result.get("expected"), result.get("answer")
        if len(found.candidates) > 1:
            verdict.warn(f"{len(found.candidates)} different boxed answers: the last one counts", "low")
        for message in result.get("messages", []):
            verdict.warn(message, "low")
        if result.get("warning") in ("low", "high"):
            verdict.warn(result["messages"][0] if result.get("messages") else "warning", result["warning"])
        return verdict

    def check_many(self, items: Iterable[Mapping[str, Any]]) -> list[Verdict]:
        """Verdicts for ``{"expected", "answer", "kind"?}`` items, in order, through one worker."""
        return [self.check(item["expected"], item["answer"], item.get("kind")) for item in items]


def check_answer(expected: str, reply: str, kind: str | None = None, **options: Any) -> Verdict:
    """One check in a worker of its own (``options``: timeout, memory_mb, rel_tol, abs_tol)."""
    with AnswerChecker(**options) as checker:
        return checker.check(expected, reply, kind)


def check_answers(items: Iterable[Mapping[str, Any]], **options: Any) -> list[Verdict]:
    """Many checks in one worker: ``items`` hold ``expected``, ``answer`` and optionally ``kind``."""
    with AnswerChecker(**options) as checker:
        return checker.check_many(items)
