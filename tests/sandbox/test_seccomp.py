"""The seccomp program, run through a small classic-BPF interpreter (the kernel's semantics)."""

from __future__ import annotations

import errno
import os
import struct

import pytest

from ama.sandbox import seccomp
from ama.sandbox.seccomp import (
    AUDIT_ARCH_AARCH64,
    AUDIT_ARCH_ARM,
    AUDIT_ARCH_I386,
    AUDIT_ARCH_X86_64,
    RET_ALLOW,
    RET_EPERM,
    RET_KILL_PROCESS,
    build_program,
)

AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16


def run_bpf(program: bytes, *, arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """Evaluate a seccomp cBPF program over one ``struct seccomp_data``."""
    args = tuple(args) + (0,) * (6 - len(args))
    data = struct.pack("<IIQ6Q", nr & 0xFFFFFFFF, arch, 0, *args)
    insns = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    for _ in range(len(insns) + 1):
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            (acc,) = struct.unpack_from("<I", data, k)
            pc += 1
        elif code == 0x15:  # jeq #k
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x35:  # jge #k
            pc += 1 + (jt if acc >= k else jf)
        elif code == 0x06:  # ret #k
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
    raise AssertionError("program did not return")


X86 = build_program("x86_64")
ARM64 = build_program("aarch64")


def test_program_is_a_whole_number_of_instructions_and_fits_bpf_limits():
    for program in (X86, ARM64):
        assert program is not None and len(program) % 8 == 0 and 0 < len(program) // 8 < 4096


@pytest.mark.parametrize(
    ("program", "arch", "socket_nr"),
    [
        (X86, AUDIT_ARCH_X86_64, 41),
        (X86, AUDIT_ARCH_I386, 359),
        (ARM64, AUDIT_ARCH_AARCH64, 198),
        (ARM64, AUDIT_ARCH_ARM, 281),
    ],
)
def test_unix_sockets_refused_other_families_allowed(program, arch, socket_nr):
    assert run_bpf(program, arch=arch, nr=socket_nr, args=(AF_UNIX, 1, 0)) == RET_EPERM
    # the kernel reads the domain as an int: high bits of the register do not matter
    assert run_bpf(program, arch=arch, nr=socket_nr, args=((7 << 32) | AF_UNIX, 1, 0)) == RET_EPERM
    for family in (AF_INET, AF_INET6, AF_NETLINK):
        assert run_bpf(program, arch=arch, nr=socket_nr, args=(family, 1, 0)) == RET_ALLOW


@pytest.mark.parametrize(
    ("program", "arch"),
    [(X86, AUDIT_ARCH_X86_64), (X86, AUDIT_ARCH_I386), (ARM64, AUDIT_ARCH_AARCH64), (ARM64, AUDIT_ARCH_ARM)],
)
def test_io_uring_refused(program, arch):
    for nr in (425, 426, 427):
        assert run_bpf(program, arch=arch, nr=nr) == RET_EPERM
    assert run_bpf(program, arch=arch, nr=424) == RET_ALLOW
    assert run_bpf(program, arch=arch, nr=428) == RET_ALLOW


def test_ordinary_syscalls_allowed():
    for nr in (0, 1, 2, 57, 59, 60, 231, 53):  # read write open fork execve exit exit_group socketpair
        assert run_bpf(X86, arch=AUDIT_ARCH_X86_64, nr=nr, args=(AF_UNIX,)) == RET_ALLOW
    for nr in (63, 64, 221, 199):  # read write execve socketpair (aarch64)
        assert run_bpf(ARM64, arch=AUDIT_ARCH_AARCH64, nr=nr, args=(AF_UNIX,)) == RET_ALLOW


def test_x32_abi_refused_on_x86_64():
    # x32 socket(AF_INET...) and read: every x32 call is refused, it would bypass number checks
    assert run_bpf(X86, arch=AUDIT_ARCH_X86_64, nr=0x40000000 + 41, args=(AF_UNIX,)) == RET_EPERM
    assert run_bpf(X86, arch=AUDIT_ARCH_X86_64, nr=0x40000000 + 0) == RET_EPERM


def test_i386_socketcall_socket_refused_other_calls_allowed():
    sys_socket, sys_connect = 1, 3
    assert run_bpf(X86, arch=AUDIT_ARCH_I386, nr=102, args=(sys_socket, 0)) == RET_EPERM
    assert run_bpf(X86, arch=AUDIT_ARCH_I386, nr=102, args=(sys_connect, 0)) == RET_ALLOW


def test_unknown_architecture_killed():
    assert run_bpf(X86, arch=AUDIT_ARCH_AARCH64, nr=0) == RET_KILL_PROCESS
    assert run_bpf(ARM64, arch=AUDIT_ARCH_X86_64, nr=0) == RET_KILL_PROCESS


def test_refusal_is_eperm():
    assert RET_EPERM & 0xFFFF == errno.EPERM and RET_EPERM & 0xFFFF0000 == 0x00050000


def test_no_filter_on_other_machines():
    for machine in ("riscv64", "ppc64le", "s390x", "armv7l"):
        assert build_program(machine) is None


def test_program_fd_holds_exactly_the_program():
    fd = seccomp.program_fd()
    if seccomp.host_program() is None:
        assert fd is None
        return
    try:
        data = b""
        while chunk := os.read(fd, 4096):
            data += chunk
    finally:
        os.close(fd)
    assert data == seccomp.host_program() == build_program(os.uname().machine)
