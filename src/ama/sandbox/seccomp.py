"""A classic-BPF seccomp program for bwrap's ``--seccomp FD`` (standard library only).

The filter refuses, with ``EPERM``:

* ``socket(AF_UNIX, ...)`` -- a Unix socket on the host (an ssh agent, ``docker.sock``, the
  session bus) is reachable through the read-only root, because connecting to a socket file
  is not a write.  ``socketpair`` stays allowed: it cannot reach anything outside.
* ``io_uring_setup`` / ``io_uring_enter`` / ``io_uring_register`` -- io_uring performs socket
  and file operations without the system calls this filter sees.
* on x86-64, every x32-ABI call (they would bypass the number checks) and, for i386
  programs, ``socketcall(SYS_SOCKET, ...)`` (its domain argument sits in memory that a
  seccomp filter cannot read).

Native and compat ABIs are covered on x86-64 (x86-64, i386) and aarch64 (aarch64, arm);
a system call from any other architecture kills the process.  On other machines there is
no filter (``program_for`` returns None) and the documentation says so.

The program is a list of ``struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}`` in native
(little-endian) byte order, exactly what ``seccomp_export_bpf`` would write.  It is built
once per process (``host_program``); ``program_fd`` hands a copy to one bwrap through a pipe.
"""

from __future__ import annotations

import errno
import os
import struct
from functools import cache

# seccomp_data offsets
_NR = 0
_ARCH = 4
_ARG0_LO = 16  # args[0], low 32 bits (little endian)

# classic BPF opcodes
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K

RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_EPERM = RET_ERRNO | errno.EPERM

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_ARM = 0x40000028

X32_SYSCALL_BIT = 0x40000000
AF_UNIX = 1
SYS_SOCKET = 1  # socketcall(2) call number
IO_URING = (425, 426, 427)  # io_uring_setup, io_uring_enter, io_uring_register (same on every arch)

#: arch -> (AUDIT_ARCH value, socket nr, socketcall nr or None, refuse x32)
_ABIS: dict[str, tuple[int, int, int | None, bool]] = {
    "x86_64": (AUDIT_ARCH_X86_64, 41, None, True),
    "i386": (AUDIT_ARCH_I386, 359, 102, False),
    "aarch64": (AUDIT_ARCH_AARCH64, 198, None, False),
    "arm": (AUDIT_ARCH_ARM, 281, None, False),
}

#: machine (``os.uname().machine``) -> (native ABI, compat ABI)
MACHINES: dict[str, tuple[str, str]] = {
    "x86_64": ("x86_64", "i386"),
    "amd64": ("x86_64", "i386"),
    "aarch64": ("aarch64", "arm"),
    "arm64": ("aarch64", "arm"),
}


class _Asm:
    """A tiny assembler: instructions with symbolic forward jump targets."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def ld(self, offset: int) -> None:
        self.code.append((LD_W_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, jt: str | int = 0, jf: str | int = 0) -> None:
        self.code.append((op, jt, jf, k))

    def ret(self, k: int) -> None:
        self.code.append((RET_K, 0, 0, k))

    def assemble(self) -> bytes:
        out = bytearray()
        for i, (op, jt, jf, k) in enumerate(self.code):
            out += struct.pack("<HBBI", op, self._rel(i, jt), self._rel(i, jf), k)
        return bytes(out)

    def _rel(self, i: int, target: object) -> int:
        if isinstance(target, int):
            return target
        rel = self.labels[str(target)] - i - 1
        if not 0 <= rel <= 255:
            raise ValueError(f"jump to {target} out of range")
        return rel


def _abi_block(asm: _Asm, name: str) -> None:
    _arch, socket_nr, socketcall_nr, refuse_x32 = _ABIS[name]
    asm.label(f"abi_{name}")
    asm.ld(_NR)
    if refuse_x32:
        asm.jump(JGE_K, X32_SYSCALL_BIT, "deny")
    asm.jump(JEQ_K, socket_nr, "check_domain")
    if socketcall_nr is not None:
        asm.jump(JEQ_K, socketcall_nr, f"socketcall_{name}")
    for nr in IO_URING:
        asm.jump(JEQ_K, nr, "deny")
    asm.ret(RET_ALLOW)
    if socketcall_nr is not None:
        asm.label(f"socketcall_{name}")
        asm.ld(_ARG0_LO)
        asm.jump(JEQ_K, SYS_SOCKET, "deny")
        asm.ret(RET_ALLOW)


def build_program(machine: str) -> bytes | None:
    """The filter for ``machine`` as raw ``sock_filter`` bytes, or None where there is none."""
    abis = MACHINES.get(machine)
    if abis is None:
        return None
    native, compat = abis
    asm = _Asm()
    asm.ld(_ARCH)
    asm.jump(JEQ_K, _ABIS[native][0], f"abi_{native}")
    asm.jump(JEQ_K, _ABIS[compat][0], f"abi_{compat}")
    asm.ret(RET_KILL_PROCESS)
    _abi_block(asm, native)
    _abi_block(asm, compat)
    asm.label("check_domain")
    asm.ld(_ARG0_LO)
    asm.jump(JEQ_K, AF_UNIX, "deny")
    asm.ret(RET_ALLOW)
    asm.label("deny")
    asm.ret(RET_EPERM)
    return asm.assemble()


@cache
def host_program() -> bytes | None:
    """The filter for this machine, built once per process."""
    return build_program(os.uname().machine)


def program_fd() -> int | None:
    """A pipe read end holding the host program (the caller closes it), or None without one.

    bwrap reads the fd to its end, so every sandboxed process needs a fresh one.  The
    program (a few hundred bytes) fits in the pipe buffer: the write never blocks.
    """
    program = host_program()
    if program is None:
        return None
    r, w = os.pipe()
    try:
        os.write(w, program)
    finally:
        os.close(w)
    return r
