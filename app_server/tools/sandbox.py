"""Filesystem sandbox for exec_command, built on Linux Landlock.

``read-only`` forbids every write; ``workspace-write`` allows writes only beneath the cwd, the writable
roots and the temp directory; ``danger-full-access`` applies nothing. Reads and execution are never
restricted. The command line is wrapped so a small launcher (``pycodex.platform.landlock`` run as a
script) applies the ruleset to itself and then execs the command: the policy holds whatever environment
spawns the process.
Where the kernel has no Landlock, ``landlock_abi()`` is 0 and the server warns instead.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pycodex.platform import landlock
from pycodex.platform.landlock import landlock_abi

__all__ = ["Sandbox", "landlock_abi", "make_sandbox"]

_LAUNCHER = str(Path(landlock.__file__).resolve())


@dataclass(frozen=True)
class Sandbox:
    """A Landlock write policy: ``wrap`` turns a command line into its sandboxed form."""

    writable: tuple[str, ...]

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run under the Landlock launcher with this policy's writable roots."""
        wrapped = [sys.executable, "-I", "-S", _LAUNCHER]
        for root in self.writable:
            wrapped += ["--write", root]
        return [*wrapped, "--", *argv]


def make_sandbox(mode: str, cwd: Path, writable_roots: Sequence[str] = ()) -> Sandbox | None:
    """The sandbox for ``mode``, or None when nothing applies (full access, or no Landlock here)."""
    if mode == "danger-full-access" or landlock_abi() == 0:
        return None
    always = ["/dev"]
    if mode == "read-only":
        return Sandbox(tuple(always))
    roots = [str(cwd), *writable_roots, "/tmp", tempfile.gettempdir(), *always]
    return Sandbox(tuple(dict.fromkeys(roots)))
