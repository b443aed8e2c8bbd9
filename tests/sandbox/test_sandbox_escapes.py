"""The escape suite: hostile programs run in the sandbox, each judged from outside it.

Every case runs as the caller (root in CI) with full isolation, and after each run no process
of the sandbox may be left (host processes of the sandbox's uid are compared before and after).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.paths import REPO

from theorembench.sandbox import SandboxResult, probe, run_sandboxed
from theorembench.sandbox.layout import SANDBOX_UID

SECRET = "canary-" + secrets.token_hex(8)


def _sandbox_pids() -> set[int]:
    """Host processes running as the sandbox's uid (or, for a non-root caller, under bubblewrap)."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "")
        if uid_line.split()[1:2] == [str(SANDBOX_UID)]:
            pids.add(int(entry.name))
    return pids


@pytest.fixture(autouse=True)
def full_sandbox(isolated: Path) -> Iterator[None]:
    pr = probe()
    if not pr.full:
        pytest.skip(f"full isolation not available here: {pr.problems}")
    before = _sandbox_pids()
    yield
    assert _sandbox_pids() <= before, "a process of the sandbox survived its run"


def run(program: str, **kw) -> SandboxResult:
    kw.setdefault("timeout_s", 20)
    return run_sandboxed(script=textwrap.dedent(program), **kw)


def test_tcp_to_a_listener_on_the_host_never_arrives() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        res = run(f"""
            import socket
            for host in ("127.0.0.1", "localhost", "10.0.2.2", "172.17.0.1"):
                try:
                    socket.create_connection((host, {port}), timeout=2).send(b"escaped")
                    print("connected", host)
                except OSError as exc:
                    print("blocked", host, exc)
        """)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert "connected" not in res.stdout and res.stdout.count("blocked") == 4


def test_udp_to_the_host_never_arrives() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx:
        rx.bind(("127.0.0.1", 0))
        rx.setblocking(False)
        res = run(f"""
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                s.sendto(b"escaped", ("127.0.0.1", {rx.getsockname()[1]}))
            except OSError as exc:
                print("blocked", exc)
        """)
        with pytest.raises(BlockingIOError):
            rx.recvfrom(100)
    assert res.status in ("ok", "error")


def test_abstract_unix_socket_of_the_host_is_unreachable() -> None:
    name = "\0tb-canary-" + secrets.token_hex(4)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(name)
        listener.listen(1)
        listener.setblocking(False)
        res = run(f"""
            import socket
            try:
                socket.socket(socket.AF_UNIX).connect({name!r}); print("connected")
            except OSError as exc:
                print("blocked", exc)
        """)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert "blocked" in res.stdout


def _reader(paths: list[str]) -> str:
    return f"""
        for path in {paths!r}:
            try:
                print(path, open(path, errors="replace").read()[:200])
            except OSError as exc:
                print("unreadable", path, type(exc).__name__)
    """


def test_canaries_in_the_home_the_store_and_the_project_stay_unread(isolated: Path) -> None:
    store = isolated / "home" / "theorembench.db"
    store.parent.mkdir(parents=True)
    store.write_text(SECRET)
    home_canary = Path.home() / f".tb-canary-{secrets.token_hex(4)}"
    home_canary.write_text(SECRET)
    project_canary = REPO / ".theorembench" / "canary.txt"
    try:
        res = run(_reader([str(store), str(home_canary), "/etc/shadow", str(project_canary), "/root/.bash_history",
                           f"/proc/1/root{store}", f"/proc/1/root{home_canary}"]))  # fmt: skip
    finally:
        home_canary.unlink()
    assert SECRET not in res.stdout + res.stderr
    assert res.stdout.count("unreadable") == 7


def test_symlinks_in_the_work_folder_lead_nowhere(isolated: Path) -> None:
    store = isolated / "home" / "theorembench.db"
    store.parent.mkdir(parents=True)
    store.write_text(SECRET)
    work = isolated / "work"
    work.mkdir()
    (work / "shadow").symlink_to("/etc/shadow")
    (work / "store").symlink_to(store)
    (work / "up").symlink_to(isolated)
    res = run(textwrap.dedent(_reader(["shadow", "store", "up/home/theorembench.db"])) + """
import os
os.symlink("/etc/passwd", "mine")
for name, target in (("out", "/root/escape-by-link"), ("out2", %r)):
    os.symlink(target, name)
    try:
        open(name, "w").write("escaped")
    except OSError as exc:
        print("blocked", exc)
""" % str(Path.home() / "escape-by-link"), work_dir=work)
    assert SECRET not in res.stdout + res.stderr and res.stdout.count("unreadable") == 3
    for target in (Path("/root/escape-by-link"), Path.home() / "escape-by-link"):
        try:
            assert not target.exists()
        except PermissionError:  # a normal user running the tests cannot even look into /root
            pass


def test_nothing_is_written_outside_the_work_folder(isolated: Path) -> None:
    name = "tb-escape-" + secrets.token_hex(4)
    targets = [f"/tmp/{name}", str(isolated / name), str(Path.home() / name), f"/usr/{name}", f"/etc/{name}",
               str(Path(__file__).resolve().parent / name), f"/proc/1/root/tmp/{name}"]  # fmt: skip
    res = run(f"""
        for path in {targets!r}:
            try:
                open(path, "w").write("escaped"); print("wrote", path)
            except OSError as exc:
                print("blocked", path, type(exc).__name__)
    """)
    assert all(not Path(p.replace("/proc/1/root", "")).exists() for p in targets), res.stdout


def test_environment_holds_no_canary_and_no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TB_CANARY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-" + SECRET)
    res = run(f"""
        import os
        print(dict(os.environ))
        for pid in ["self", "1", "2", str(os.getppid()), "{os.getpid()}"]:
            for what in ("environ", "cmdline"):
                try:
                    print(pid, what, open(f"/proc/{{pid}}/{{what}}", "rb").read())
                except OSError as exc:
                    print("unreadable", pid, what, type(exc).__name__)
    """)
    assert res.ok and SECRET not in res.stdout + res.stderr
    assert "TB_CANARY" not in res.stdout and "API_KEY" not in res.stdout


def test_allow_listed_variable_passes_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TB_ALLOWED", "visible")
    monkeypatch.setenv("TB_CANARY", SECRET)
    res = run("import os; print(os.environ.get('TB_ALLOWED'), os.environ.get('TB_CANARY'))", env_allow=["TB_ALLOWED"])
    assert res.stdout.strip() == "visible None"


def test_proc_shows_only_the_sandbox() -> None:
    res = run(f"""
        import os
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        print(max(pids), len(pids), os.path.exists("/proc/{os.getpid()}"))
        try:
            print(os.listdir("/proc/1/root/root"))
        except OSError as exc:
            print("unreadable", type(exc).__name__)
    """)
    biggest, count, caller_visible = res.stdout.split()[:3]
    assert int(biggest) < 10 and int(count) < 6 and caller_visible == "False"


def test_fork_bomb_ends_within_the_limits() -> None:
    res = run("""
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """, timeout_s=4, cpu_s=2, processes=16)
    assert res.status == "timeout" and res.wall_s < 4 + 3


def test_thread_bomb_stops_at_the_process_limit() -> None:
    res = run("""
        import threading
        stop, n = threading.Event(), 0
        try:
            while True:
                threading.Thread(target=stop.wait, daemon=True).start(); n += 1
        except RuntimeError:
            pass
        print(n)
        stop.set()
    """, processes=32)
    assert res.ok and int(res.stdout) < 32


def test_memory_bomb_is_stopped() -> None:
    res = run("""
        chunks = []
        while True:
            chunks.append(bytearray(50 * 1024 * 1024))
    """, memory_mb=512)
    assert res.status == "memory" and res.peak_memory_mb < 600


def test_cpu_spin_is_stopped_by_the_cpu_limit() -> None:
    res = run("while True: pass", timeout_s=20, cpu_s=1)
    assert res.status == "timeout" and "CPU" in res.reason and res.cpu_s < 3


def test_sleeper_is_stopped_by_the_wall_limit() -> None:
    res = run("import threading; threading.Event().wait()", timeout_s=1)
    assert res.status == "timeout" and "wall" in res.reason


def test_disk_fill_stops_at_the_file_size_limit(isolated: Path) -> None:
    work = isolated / "work"
    res = run("""
        block = b"x" * (1 << 20)
        with open("big", "wb") as f:
            while True:
                f.write(block)
    """, work_dir=work, file_size_mb=8)
    assert res.status == "error" and (work / "big").stat().st_size <= 8 << 20


def test_tmp_fill_stops_at_the_tmpfs_size() -> None:
    res = run("""
        import os
        block, i = b"x" * (1 << 20), 0
        while True:
            with open(f"/tmp/f{i}", "wb") as f:
                for _ in range(32):
                    f.write(block)
            i += 1
    """, file_size_mb=64, timeout_s=60)
    assert res.status == "error" and "No space left" in res.stderr


def test_million_lines_of_stdout_are_capped() -> None:
    res = run("for i in range(10**6): print(i)", max_output_bytes=100_000)
    assert res.status == "killed" and res.stdout_truncated and len(res.stdout) <= 100_000


def test_stderr_flood_is_capped() -> None:
    res = run("import sys\nwhile True: sys.stderr.write('x' * 4096)", max_output_bytes=50_000)
    assert res.status == "killed" and res.stderr_truncated and len(res.stderr) <= 50_000


def test_double_forked_daemon_leaves_nothing(isolated: Path) -> None:
    work = isolated / "work"
    token = "tb-daemon-" + secrets.token_hex(4)
    res = run(f"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import os, time\\n"
                         "open('daemon.pid', 'w').write(str(os.getpid()))\\n"
                         "while not os.path.exists('go'): time.sleep(0.01)\\n"
                         "open('late.txt', 'w').write('escaped')", "{token}"])
            os._exit(0)
        while not os.path.exists("daemon.pid"):
            time.sleep(0.01)
        print("daemon started")
    """, work_dir=work)
    assert res.ok and (work / "daemon.pid").exists()
    for entry in Path("/proc").iterdir():  # no process of the run is left: none can write late.txt
        try:
            assert token.encode() not in (entry / "cmdline").read_bytes()
        except OSError:
            pass
    (work / "go").write_text("")
    assert not (work / "late.txt").exists()


def test_signals_to_the_parent_and_the_caller_do_nothing() -> None:
    received: list[int] = []
    old = signal.signal(signal.SIGUSR1, lambda *_: received.append(1))
    try:
        res = run(f"""
            import os, signal
            for pid in ({os.getpid()}, {os.getppid()}, os.getppid(), 1, -1):
                try:
                    os.kill(pid, signal.SIGUSR1 if pid > 10 else signal.SIGKILL); print("sent", pid)
                except OSError as exc:
                    print("refused", pid, type(exc).__name__)
        """)
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert received == [] and res.status in ("ok", "killed", "error")


def test_ptrace_through_ctypes_fails() -> None:
    res = run("""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        print(libc.ptrace(0, 0, 0, 0), libc.ptrace(16, 1, 0, 0), libc.ptrace(16, os.getppid(), 0, 0))
    """)
    assert res.stdout.split() == ["-1", "-1", "-1"]


def test_mount_and_namespaces_through_ctypes_fail() -> None:
    res = run("""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        os.mkdir("m")
        print(libc.mount(b"tmpfs", b"m", b"tmpfs", 0, None), libc.mount(b"/", b"m", None, 4096, None),
              libc.unshare(0x10000000), libc.unshare(0x20000), libc.setns(0, 0), libc.chroot(b"/tmp"))
    """)
    assert res.stdout.split() == ["-1"] * 6


def test_privilege_changes_fail() -> None:
    res = run("""
        import os
        for fn in (lambda: os.setuid(0), lambda: os.setgid(0), lambda: open("/proc/sysrq-trigger", "w").write("b"),
                   lambda: open("/usr/bin/python-escape", "w"), lambda: os.sethostname("escaped") if hasattr(os, "sethostname") else 1/0):
            try:
                fn(); print("done")
            except (OSError, ZeroDivisionError) as exc:
                print("refused")
    """)
    assert res.stdout.split() == ["refused"] * 5


def test_kernel_interfaces_are_refused() -> None:
    res = run("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        print(libc.syscall(425, 8, ctypes.create_string_buffer(120)), libc.syscall(321, 0, 0, 0),
              libc.syscall(250, 0, 0, 0, 0, 0), libc.syscall(298, 0, 0, 0, 0, 0))
    """)
    assert res.stdout.split() == ["-1"] * 4


def test_open_files_are_limited() -> None:
    res = run("""
        files = []
        try:
            while True:
                files.append(open("/dev/null"))
        except OSError:
            print(len(files))
    """)
    assert res.ok and int(res.stdout) < 256


def test_no_devices_nor_sys() -> None:
    res = run("import os; print(sorted(os.listdir('/dev')), os.path.exists('/sys/kernel'), os.path.exists('/dev/sda'))")
    assert res.ok and "False False" in res.stdout and "mem" not in res.stdout.split("]")[0].replace("'", " ").split()
