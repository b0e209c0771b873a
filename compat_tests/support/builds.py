"""Which executables the compat matrix pairs, where they come from, and how to name them in test ids.

* ``current``: ``$PYCODEX_COMPAT_CURRENT`` (a command line, split like a shell would), else this
  checkout run as ``python -m pycodex``.
* ``released``: ``$PYCODEX_COMPAT_RELEASED``, an older pycodex executable; absent means skip.
* ``codex-0.169``: ``$PYCODEX_CODEX_BIN``, else the npm copy under the repository; absent means skip.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BUILD_NAMES", "CODEX_BIN_REL", "REPO_ROOT", "Build", "Pairing", "find_build"]

REPO_ROOT = Path(__file__).resolve().parents[2]
CODEX_BIN_REL = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
BUILD_NAMES = ("current", "released", "codex-0.169")


@dataclass(frozen=True)
class Build:
    """One executable under test; ``argv`` is the prefix before the subcommand."""

    name: str
    argv: tuple[str, ...]

    def command(self, *args: str) -> list[str]:
        return [*self.argv, *args]


def _command_from_env(var: str) -> tuple[str, ...] | None:
    value = os.environ.get(var, "").strip()
    return tuple(shlex.split(value)) if value else None


def find_build(name: str) -> tuple[Build | None, str]:
    """The build called ``name``, or None with the reason it is unavailable (the skip message)."""
    if name == "current":
        argv = _command_from_env("PYCODEX_COMPAT_CURRENT") or (sys.executable, "-m", "pycodex")
        return Build("current", argv), ""
    if name == "released":
        released = _command_from_env("PYCODEX_COMPAT_RELEASED")
        if released is None:
            return None, "no released pycodex build: set PYCODEX_COMPAT_RELEASED to its executable"
        if "/" in released[0] and not Path(released[0]).is_file():
            return None, f"PYCODEX_COMPAT_RELEASED names a missing file: {released[0]}"
        return Build("released", released), ""
    if name == "codex-0.169":
        env = os.environ.get("PYCODEX_CODEX_BIN")
        path = Path(env) if env else REPO_ROOT / CODEX_BIN_REL
        if not (path.is_file() and os.access(path, os.X_OK)):
            return None, f"Codex 0.169.0 binary not found at {path} (npm install, or set PYCODEX_CODEX_BIN)"
        return Build("codex-0.169", (str(path),)), ""
    raise ValueError(f"unknown build {name!r}; expected one of {BUILD_NAMES}")


@dataclass(frozen=True)
class Pairing:
    """Who serves which side of one compat run."""

    app: Build
    executor: Build
    #: The build whose ``relay`` subcommand runs the development registry and rendezvous.
    relay: Build

    @property
    def label(self) -> str:
        return f"{self.app.name} app-server -> {self.executor.name} exec-server"
