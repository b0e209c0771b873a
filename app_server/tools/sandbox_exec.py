"""Apply a Landlock write policy to this process, then exec the command.

Run as a standalone script (no package imports, so ``python -I -S`` starts it fast)::

    python sandbox_exec.py [--write DIR]... -- PROGRAM [ARGS...]

Every filesystem write outside the ``--write`` directories fails with EACCES; reads and execution are
untouched. ``app_server.tools.sandbox`` builds these command lines and shares the constants below.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
PR_SET_NO_NEW_PRIVS = 38
RULE_PATH_BENEATH = 1
WRITE_FILE = 1 << 1
REMOVE_DIR, REMOVE_FILE = 1 << 4, 1 << 5
MAKE_BITS = sum(1 << b for b in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
REFER, TRUNCATE = 1 << 13, 1 << 14


def write_rights(abi: int) -> int:
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_BITS
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def restrict_writes(writable: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(SYS_CREATE_RULESET, None, 0, 1)
    if abi <= 0:
        raise OSError(ctypes.get_errno(), "Landlock is not available")
    handled = write_rights(abi)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
    attr = ctypes.create_string_buffer(struct.pack("=Q", handled))
    ruleset = libc.syscall(SYS_CREATE_RULESET, attr, 8, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    for path in writable:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a root that does not exist grants nothing
        rule = ctypes.create_string_buffer(struct.pack("=Qi", handled, fd))
        libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, rule, 0)
        os.close(fd)
    if libc.syscall(SYS_RESTRICT_SELF, ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    os.close(ruleset)


def main(argv: list[str]) -> int:
    writable: list[str] = []
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--write" and i + 1 < len(argv):
            writable.append(argv[i + 1])
            i += 2
        else:
            print(f"sandbox_exec: unexpected argument {argv[i]!r}", file=sys.stderr)
            return 2
    command = argv[i + 1 :]
    if not command:
        print("sandbox_exec: no command given", file=sys.stderr)
        return 2
    try:
        restrict_writes(writable)
    except OSError as exc:
        print(f"sandbox_exec: {exc}", file=sys.stderr)
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"sandbox_exec: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
