"""A seccomp filter (classic BPF) that refuses the system calls sandboxed code never needs.

Refused with EPERM: ptrace, mount and the new mount API, namespaces (unshare, setns), keyrings,
bpf, perf events, userfaultfd, reading or writing other processes' memory, kernel modules,
kexec, reboot, swap, chroot and pivot_root, io_uring. Foreign system-call ABIs (x32, 32-bit)
are killed. Built here; loaded by the launcher inside the sandbox.
"""

from __future__ import annotations

import platform
import struct

_EPERM = 1
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06

# numbers shared by every architecture since Linux 5.1 (the unified table)
_COMMON = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
           "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
           "mount_setattr": 442}  # fmt: skip
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {"ptrace": 101, "mount": 165, "umount2": 166, "unshare": 272, "setns": 308,
                            "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
                            "userfaultfd": 323, "process_vm_readv": 310, "process_vm_writev": 311,
                            "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
                            "kexec_file_load": 320, "reboot": 169, "swapon": 167, "swapoff": 168,
                            "chroot": 161, "pivot_root": 155, "acct": 163, "personality": 135}),
    "aarch64": (0xC00000B7, {"ptrace": 117, "mount": 40, "umount2": 39, "unshare": 97, "setns": 268,
                             "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280, "perf_event_open": 241,
                             "userfaultfd": 282, "process_vm_readv": 270, "process_vm_writev": 271,
                             "init_module": 105, "finit_module": 273, "delete_module": 106, "kexec_load": 104,
                             "kexec_file_load": 294, "reboot": 142, "swapon": 224, "swapoff": 225,
                             "chroot": 51, "pivot_root": 41, "acct": 89, "personality": 92}),
}  # fmt: skip


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def filter_program() -> bytes:
    """The BPF program for this machine's architecture, or b"" where it is not known here."""
    arch = platform.machine()
    if arch not in _ARCHES:
        return b""
    audit_arch, table = _ARCHES[arch]
    numbers = sorted(set(table.values()) | set(_COMMON.values()))
    prog = [
        _insn(_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        _insn(_JEQ_K, 1, 0, audit_arch),
        _insn(_RET_K, 0, 0, _RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    if arch == "x86_64":  # the x32 ABI sets bit 30 of the number
        prog += [_insn(_JGE_K, 0, 1, 0x40000000), _insn(_RET_K, 0, 0, _RET_KILL_PROCESS)]
    for nr in numbers:
        prog += [_insn(_JEQ_K, 0, 1, nr), _insn(_RET_K, 0, 0, _RET_ERRNO | _EPERM)]
    prog.append(_insn(_RET_K, 0, 0, _RET_ALLOW))
    return b"".join(prog)
