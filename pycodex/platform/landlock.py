"""Linux Landlock: restrict this process's filesystem writes (and, from ABI 4, TCP) before it execs.

The only Landlock code in pycodex. Callers decide *what* to allow; this module turns a writable set
into a ruleset and applies it to the calling process. Two ways in:

* ``confinement(writable, restrict_network=...)`` gives a function to run in a child between fork and
  exec (the exec-server passes it as the spawn's confine step);
* run as a script, ``python -I -S landlock.py [--write DIR]... -- PROGRAM [ARGS...]`` confines itself
  and execs the program (the app-server's exec tool wraps command lines this way, so the policy holds
  whichever environment spawns them). Hence stdlib imports only: ``-I -S`` starts it fast.

Writes beneath the writable paths stay allowed (a file gets only write/truncate: the rights a rule on a
non-directory may hold); reads and execution are never restricted. A writable path that does not exist
grants nothing.
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
import sys
from collections.abc import Callable, Sequence
from functools import cache

__all__ = ["confinement", "landlock_abi", "main", "restrict_self", "write_rights"]

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1
_WRITE_FILE, _REMOVE_DIR, _REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
_MAKE_ALL = sum(1 << b for b in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER, _TRUNCATE = 1 << 13, 1 << 14
_FILE_RIGHTS = _WRITE_FILE | _TRUNCATE  # the only write rights a rule on a non-directory may hold
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1


@cache
def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return max(int(libc.syscall(_CREATE_RULESET, None, 0, 1)), 0)
    except (OSError, AttributeError):
        return 0


def write_rights(abi: int) -> int:
    """Every write-like filesystem right the kernel at ``abi`` can handle."""
    rights = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_ALL
    return rights | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)


def restrict_self(fs_rights: int, net_rights: int, writable: Sequence[str]) -> None:
    """Apply the ruleset to this process (irreversibly); OSError if the kernel refuses any step."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = struct.pack("=QQ", fs_rights, net_rights) if net_rights else struct.pack("=Q", fs_rights)
    ruleset = libc.syscall(_CREATE_RULESET, attr, len(attr), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path in writable if fs_rights else ():
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a missing writable root grants nothing
            try:
                rights = fs_rights if stat.S_ISDIR(os.fstat(fd).st_mode) else fs_rights & _FILE_RIGHTS
                rule = struct.pack("=Qi", rights, fd)
                if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def confinement(
    writable: Sequence[str] | None, *, restrict_network: bool = False
) -> Callable[[], None] | None:
    """The function that confines the calling process; None when nothing can or need be restricted.

    ``writable=None`` leaves writes alone. A network restriction needs ABI 4; on older kernels it is
    dropped (best effort) and only the filesystem part applies.
    """
    abi = landlock_abi()
    fs_rights = write_rights(abi) if writable is not None else 0
    net_rights = _NET_BIND_TCP | _NET_CONNECT_TCP if restrict_network and abi >= 4 else 0
    if abi == 0 or (not fs_rights and not net_rights):
        return None
    paths = list(writable or ())

    def confine() -> None:
        restrict_self(fs_rights, net_rights, paths)

    return confine


def main(argv: list[str]) -> int:
    """The launcher: confine writes to the ``--write`` directories, then exec the command."""
    writable: list[str] = []
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--write" and i + 1 < len(argv):
            writable.append(argv[i + 1])
            i += 2
        else:
            print(f"sandbox: unexpected argument {argv[i]!r}", file=sys.stderr)
            return 2
    command = argv[i + 1 :]
    if not command:
        print("sandbox: no command given", file=sys.stderr)
        return 2
    confine = confinement(writable)
    if confine is None:
        print("sandbox: Landlock is not available", file=sys.stderr)
        return 126
    try:
        confine()
    except OSError as exc:
        print(f"sandbox: {exc}", file=sys.stderr)
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"sandbox: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
