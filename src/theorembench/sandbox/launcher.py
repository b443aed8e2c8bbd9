"""The launcher that runs first inside the sandbox: limits, no-new-privs, seccomp, then exec.

Standard library only and nothing of theorembench: it runs with ``python -I -S -c`` inside
the sandbox, where the package is not mounted. ``argv[1]`` is a JSON object:
``{"rlimits": {"RLIMIT_CPU": [soft, hard], ...}, "seccomp": "<hex of the BPF program>" or "",
"argv": [...], "report_fd": N or null}``. The launcher stays as the program's parent, and writes
the program's CPU time and peak memory (from ``wait4``) to ``report_fd``, which the program does
not inherit. A program killed by signal S makes the launcher exit with 128 + S.
"""

import ctypes
import json
import os
import resource
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _die(message):
    os.write(2, ("sandbox launcher: " + message + "\n").encode())
    os._exit(126)


def main():
    cfg = json.loads(sys.argv[1])
    report_fd = cfg.get("report_fd")
    if report_fd is not None:
        os.set_inheritable(report_fd, False)
    for name, (soft, hard) in cfg["rlimits"].items():
        try:
            resource.setrlimit(getattr(resource, name), (soft, hard))
        except (ValueError, OSError) as exc:
            _die("setrlimit %s: %s" % (name, exc))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _die("no_new_privs: errno %d" % ctypes.get_errno())
    program = bytes.fromhex(cfg.get("seccomp") or "")
    if program:
        buf = ctypes.create_string_buffer(program, len(program))
        prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
        if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
            _die("seccomp: errno %d" % ctypes.get_errno())
    argv = cfg["argv"]
    try:
        pid = os.fork()
    except OSError as exc:
        _die("fork: %s" % exc)
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            _die("cannot run %s: %s" % (argv[0], exc))
    _, status, ru = os.wait4(pid, 0)
    if report_fd is not None:
        report = {"cpu_s": ru.ru_utime + ru.ru_stime, "maxrss_kb": ru.ru_maxrss}
        try:
            os.write(report_fd, json.dumps(report).encode())
        except OSError:
            pass
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


main()
