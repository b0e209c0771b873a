"""Filesystem sandbox for exec_command, built on Linux Landlock.

``read-only`` forbids every write; ``workspace-write`` allows writes only beneath the cwd, the writable
roots and the temp directory; ``danger-full-access`` applies nothing. Reads and execution are never
restricted. The ruleset is applied in the child between fork and exec, so nothing else in the server is
affected. Where the kernel has no Landlock, ``landlock_abi()`` is 0 and the caller warns instead.
"""

from __future__ import annotations

import ctypes
import os
import struct
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["Sandbox", "landlock_abi", "make_sandbox"]

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_PR_SET_NO_NEW_PRIVS = 38
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

_WRITE_FILE = 1 << 1
_REMOVE_DIR, _REMOVE_FILE = 1 << 4, 1 << 5
_MAKE_BITS = sum(1 << b for b in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER, _TRUNCATE = 1 << 13, 1 << 14


@cache
def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        abi = int(libc.syscall(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(abi, 0)


def _write_rights(abi: int) -> int:
    rights = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_BITS
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    return rights


@dataclass(frozen=True)
class Sandbox:
    """A Landlock write policy: ``preexec`` applies it in a freshly forked child."""

    writable: tuple[str, ...]
    abi: int

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return list(argv)

    @property
    def preexec(self) -> Callable[[], None]:
        handled = _write_rights(self.abi)
        writable = self.writable
        # Everything the child needs is prepared here, in the parent.
        ruleset_attr = ctypes.create_string_buffer(struct.pack("=Q", handled))
        libc = ctypes.CDLL(None, use_errno=True)

        def apply() -> None:
            if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
            ruleset = libc.syscall(_SYS_CREATE_RULESET, ruleset_attr, 8, 0)
            if ruleset < 0:
                raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
            for path in writable:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # a root that does not exist yet grants nothing
                rule = ctypes.create_string_buffer(struct.pack("=Qi", handled, fd))
                libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0)
                os.close(fd)
            if libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
                raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
            os.close(ruleset)

        return apply


def make_sandbox(mode: str, cwd: Path, writable_roots: Sequence[str] = ()) -> Sandbox | None:
    """The sandbox for ``mode``, or None when nothing applies (full access, or no Landlock here)."""
    if mode == "danger-full-access":
        return None
    abi = landlock_abi()
    if abi == 0:
        return None
    always = ["/dev"]
    if mode == "read-only":
        return Sandbox(tuple(always), abi)
    roots = [str(cwd), *writable_roots, "/tmp", tempfile.gettempdir(), *always]
    return Sandbox(tuple(dict.fromkeys(roots)), abi)
