"""The first stage when the caller is root: drop to an unprivileged user before bubblewrap.

Standard library only; runs on the host as ``python -I -S -c`` with a JSON ``argv[1]``:
``{"uid": X, "gid": X, "covers": [[folder, [path, ...]], ...], "argv": [bwrap, ...]}``.

As root, RLIMIT_NPROC is not enforced (not even inside a user namespace mapped to root), so a
fork bomb would not stop. This stage forks a child into a new user and mount namespace whose
map is ``0 -> 0`` and ``1 -> X`` (written by this parent, which holds CAP_SETUID). The child
covers folders that uid X cannot enter (``/root``, mode 0700) with a tmpfs holding bind mounts
of just the paths the sandbox needs (the interpreter's folders or files), drops to uid 1 (host
uid X), and runs bubblewrap. Processes of the sandbox then belong to an ordinary user: the process limit
holds. The child dies with this stage (PR_SET_PDEATHSIG), and this stage exits with its status.

With ``"uid": null`` (a caller that is not root) the namespaces are left to bubblewrap. Either
way this stage is a child subreaper: bubblewrap's pid 1 is reparented to it and reaped only once
its pid namespace is empty, so every process of the run is gone when this stage exits. SIGTERM
makes it kill bubblewrap (the sandbox then dies with it) and still reap everything first.
"""

import ctypes
import json
import os
import signal
import stat
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _fail(message):
    os.write(2, ("sandbox stage0: " + message + "\n").encode())
    os._exit(125)


def _child(cfg, libc, ready_w, go_r):
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if cfg["uid"] is None:
        os.execv(cfg["argv"][0], cfg["argv"])
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        _fail("unshare: errno %d" % ctypes.get_errno())
    os.write(ready_w, b"1")
    if os.read(go_r, 1) != b"1":
        _fail("the id maps were not written")
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        _fail("make / private: errno %d" % ctypes.get_errno())
    for folder, paths in cfg["covers"]:
        fds = [(p, os.open(p, os.O_PATH)) for p in paths]
        if libc.mount(b"tmpfs", folder.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0755") != 0:
            _fail("tmpfs on %s: errno %d" % (folder, ctypes.get_errno()))
        for path, fd in fds:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.makedirs(path, exist_ok=True)
            else:  # a file (the interpreter's own files of a prefix that is not bound whole)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
            source = ("/proc/self/fd/%d" % fd).encode()
            if libc.mount(source, path.encode(), None, MS_BIND | MS_REC, None) != 0:
                _fail("bind %s: errno %d" % (path, ctypes.get_errno()))
            os.close(fd)
    os.setgroups([])
    os.setresgid(1, 1, 1)
    os.setresuid(1, 1, 1)
    argv = cfg["argv"]
    try:
        os.execv(argv[0], argv)
    except OSError as exc:
        _fail("cannot run %s: %s" % (argv[0], exc))


def main():
    cfg = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        _child(cfg, libc, ready_w, go_r)
    os.close(ready_w)
    os.close(go_r)

    def stop(*_):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, stop)
    if cfg["uid"] is not None and os.read(ready_r, 1) == b"1":
        try:
            with open("/proc/%d/uid_map" % pid, "w") as f:
                f.write("0 0 1\n1 %d 1\n" % cfg["uid"])
            with open("/proc/%d/gid_map" % pid, "w") as f:
                f.write("0 0 1\n1 %d 1\n" % cfg["gid"])
            os.write(go_w, b"1")
        except OSError as exc:
            os.write(2, ("sandbox stage0: id maps: %s\n" % exc).encode())
    os.close(go_w)
    _, status = os.waitpid(pid, 0)
    while True:  # the orphans: bubblewrap's pid 1, reaped once its namespace is empty
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


main()
