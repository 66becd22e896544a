"""A seccomp filter that refuses new user namespaces: bubblewrap's ``--seccomp`` program for
bots of a root referee.

A bot of a root referee runs in namespaces made by root, as an unprivileged host uid
(:mod:`referee.net.botuid`). Such a bot could still make a user namespace of its own (any
unprivileged user may), be "root" in it, and reach the kernel code that only namespace owners
reach. bubblewrap's ``--disable-userns`` needs a user namespace of the sandbox's own, which a
root sandbox does not have; this filter does the same job: ``unshare`` and ``clone`` with
``CLONE_NEWUSER`` fail with EPERM, ``clone3`` (whose flags a filter cannot read) with ENOSYS,
so that C libraries fall back to ``clone``. Every other system call is allowed. Calls from a
foreign ABI (32-bit x86 or x32 on x86-64) fail with ENOSYS, so they cannot go round the
filter's numbers.

The program is classic BPF (``struct sock_filter``: u16 code, u8 jt, u8 jf, u32 k), written
here by hand for x86-64 and AArch64; :func:`program` returns None on any other machine (the
sandbox then says so and runs without it). bubblewrap reads the program from a descriptor:
:func:`program_fd` gives a new one each time (the reads of one spawn must not move another's
offset).
"""

from __future__ import annotations

import functools
import os
import platform
import struct

__all__ = ["program", "program_fd"]

CLONE_NEWUSER = 0x10000000
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM, _ENOSYS = 1, 38

# machine: (AUDIT_ARCH, unshare, clone, clone3, first foreign number or None)
_ARCHES = {
    "x86_64": (0xC000003E, 272, 56, 435, 0x40000000),
    "aarch64": (0xC00000B7, 97, 220, 435, None),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


@functools.cache
def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one's), or None where it is not written.

    >>> len(program("x86_64")) // 8, program("sparc64")
    (14, None)
    """
    found = _ARCHES.get(machine or platform.machine())
    if found is None:
        return None
    arch, unshare, clone, clone3, foreign = found
    deny_foreign = [_insn(_JGE, foreign, 0, 1), _insn(_RET, _ERRNO | _ENOSYS)] if foreign else []
    tail = [
        _insn(_JEQ, clone3, 0, 1),
        _insn(_RET, _ERRNO | _ENOSYS),
        _insn(_JEQ, unshare, 1, 0),
        _insn(_JEQ, clone, 0, 3),
        _insn(_LD_W_ABS, 16),  # args[0], low half: the flags of unshare and clone
        _insn(_JSET, CLONE_NEWUSER, 0, 1),
        _insn(_RET, _ERRNO | _EPERM),
        _insn(_RET, _ALLOW),
    ]
    head = [
        _insn(_LD_W_ABS, 4),  # seccomp_data.arch
        _insn(_JEQ, arch, 1, 0),
        _insn(_RET, _ERRNO | _ENOSYS),
        _insn(_LD_W_ABS, 0),  # seccomp_data.nr
    ]
    return b"".join([*head, *deny_foreign, *tail])


@functools.cache
def _memfd() -> int | None:
    code = program()
    if code is None:
        return None
    fd = os.memfd_create("gin-referee-seccomp", os.MFD_CLOEXEC)
    os.write(fd, code)
    return fd


def program_fd() -> int | None:
    """A new read-only descriptor at the start of the filter (the caller closes it), or None
    where there is no filter for this machine."""
    fd = _memfd()
    return None if fd is None else os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
