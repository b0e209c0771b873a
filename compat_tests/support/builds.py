"""Build specs of the compat matrix: parse one, and turn it into an executable (building it if needed).

Specs:

* ``current``: this checkout, run as ``python -m pycodex`` (``$PYCODEX_COMPAT_CURRENT`` overrides the
  command line, split like a shell would).
* ``pycodex@REF``: a release from ``compat_tests/releases.txt`` (``@last`` is the newest) or any git
  tag/commit of this repository, built into a wheel and installed in its own venv in the cache.
* ``codex@VERSION``: the ``@openai/codex`` npm package, installed with ``npm install --prefix`` into the
  cache (keyed by version); ``codex@latest`` asks the registry which version that is.
* ``path:/abs/bin``: any executable with ``app-server`` and ``exec-server`` subcommands.

A build that cannot be had resolves to ``None`` with the reason (the test's skip message). The cache is
``$PYCODEX_COMPAT_CACHE``, else ``$XDG_CACHE_HOME/pycodex-compat``, else ``~/.cache/pycodex-compat``;
builds are made under a file lock so parallel workers build each one once.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import platform
import shlex
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CODEX_BIN_REL",
    "REPO_ROOT",
    "Build",
    "Pairing",
    "cache_dir",
    "find_build",
    "last_release",
    "parse_spec",
    "releases",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
RELEASES_FILE = REPO_ROOT / "compat_tests" / "releases.txt"
CODEX_BIN_REL = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
_BUILD_TIMEOUT = 900.0
_NPM_TIMEOUT = 600.0


@dataclass(frozen=True)
class Build:
    """One executable under test; ``argv`` is the prefix before the subcommand, ``name`` the spec."""

    name: str
    argv: tuple[str, ...]

    def command(self, *args: str) -> list[str]:
        return [*self.argv, *args]


@dataclass(frozen=True)
class Pairing:
    """Who serves which side of one compat run."""

    app: Build
    executor: Build
    #: The build whose ``relay`` subcommand runs the development registry and rendezvous (always current).
    relay: Build

    @property
    def label(self) -> str:
        return f"{self.app.name} app-server -> {self.executor.name} exec-server"


def parse_spec(spec: str) -> tuple[str, str]:
    """``(kind, argument)`` of a spec; raises ValueError with the accepted forms on anything else."""
    if spec == "current":
        return "current", ""
    for kind in ("pycodex", "codex"):
        if spec.startswith(f"{kind}@") and len(spec) > len(kind) + 1:
            return kind, spec[len(kind) + 1 :]
    if spec.startswith("path:") and spec[5:].startswith("/"):
        return "path", spec[5:]
    raise ValueError(
        f"bad build spec {spec!r}: expected current, pycodex@REF, codex@VERSION, codex@latest or path:/abs/bin"
    )


def cache_dir() -> Path:
    explicit = os.environ.get("PYCODEX_COMPAT_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "pycodex-compat"


def releases() -> list[tuple[str, str]]:
    """``(version, commit)`` of every pycodex release, oldest first."""
    out = []
    for line in RELEASES_FILE.read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) == 2:
            out.append((fields[0], fields[1]))
    return out


def last_release() -> str:
    return f"pycodex@{releases()[-1][0]}"


def find_build(spec: str) -> tuple[Build | None, str]:
    """The build ``spec`` names, or None with the reason it is unavailable."""
    kind, arg = parse_spec(spec)
    # `pycodex compat` resolves every build once up front and hands the failures to its workers.
    known_missing = json.loads(os.environ.get("PYCODEX_COMPAT_UNAVAILABLE") or "{}")
    if spec in known_missing:
        return None, str(known_missing[spec])
    if kind == "current":
        env = os.environ.get("PYCODEX_COMPAT_CURRENT", "").strip()
        return Build(spec, tuple(shlex.split(env)) if env else (sys.executable, "-m", "pycodex")), ""
    if kind == "path":
        path = Path(arg)
        if not (path.is_file() and os.access(path, os.X_OK)):
            return None, f"{spec}: no executable file at {path}"
        return Build(spec, (str(path),)), ""
    if kind == "codex":
        return _codex_build(spec, arg)
    return _pycodex_build(spec, arg)


@contextmanager
def _locked(name: str) -> Iterator[Path]:
    """An exclusive lock on ``CACHE/name.lock``; yields ``CACHE/name``."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held by a builder for at most one bounded build
        try:
            yield root / name
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run(argv: list[str], timeout: float) -> tuple[bool, str]:
    """Run a build step; (ok, last stderr line or the reason it could not run)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{argv[0]}: {exc}"
    lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
    return done.returncode == 0, lines[-1] if lines else f"{argv[0]} exited {done.returncode}"


def _codex_binary(prefix: Path) -> Path:
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine(), "x64"
    )
    triple = "x86_64" if arch == "x64" else "aarch64"
    return prefix / f"node_modules/@openai/codex-linux-{arch}/vendor/{triple}-unknown-linux-musl/bin/codex"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _codex_build(spec: str, version: str) -> tuple[Build | None, str]:
    if version == "latest":
        ok, out = _run_stdout(["npm", "view", "@openai/codex", "version"], 60.0)
        if not ok:
            return None, f"{spec}: cannot ask the npm registry for the latest version ({out})"
        version = out
    # The repository's own npm copy (installed by .ci/run) serves its version without another install.
    repo_pkg = REPO_ROOT / "node_modules/@openai/codex/package.json"
    if repo_pkg.is_file() and json.loads(repo_pkg.read_text()).get("version") == version:
        binary = _codex_binary(REPO_ROOT)
        if _executable(binary):
            return Build(spec, (str(binary),)), ""
    with _locked(f"codex-{version}") as prefix:
        binary = _codex_binary(prefix)
        if not _executable(binary):
            argv = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(prefix)]
            ok, why = _run([*argv, f"@openai/codex@{version}"], _NPM_TIMEOUT)
            if not ok or not _executable(binary):
                return None, f"{spec}: npm install failed: {why}"
    return Build(spec, (str(binary),)), ""


def _run_stdout(argv: list[str], timeout: float) -> tuple[bool, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    if done.returncode != 0:
        return False, (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return True, done.stdout.strip()


def _pycodex_build(spec: str, ref: str) -> tuple[Build | None, str]:
    known = dict(releases())
    if ref == "last":
        ref = releases()[-1][0]
    ok, sha = _run_stdout(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--verify", f"{known.get(ref, ref)}^{{commit}}"], 30.0
    )
    if not ok:
        return None, f"{spec}: not a commit of this repository ({sha})"
    with _locked(f"pycodex-{sha[:12]}") as root:
        binary = root / "venv" / "bin" / "pycodex"
        if not _executable(binary):
            why = _build_pycodex(sha, root)
            if why:
                return None, f"{spec}: {why}"
    # `pycodex compat` puts this checkout on PYTHONPATH so pytest finds compat_tests; a release must not
    # see it (it would run today's code), nor may the processes it spawns.
    return Build(spec, ("env", "-u", "PYTHONPATH", str(binary))), ""


def _build_pycodex(sha: str, root: Path) -> str:
    """Wheel of commit ``sha`` installed into ``root/venv``; '' on success, else the reason."""
    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", "--format=tar", sha],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if archive.returncode != 0:
        return f"git archive failed: {archive.stderr.decode(errors='replace').strip()}"
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as scratch:
        source = Path(scratch) / "src"
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(source, filter="data")
        wheels = Path(scratch) / "wheels"
        ok, why = _run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
            _BUILD_TIMEOUT,
        )
        if not ok:
            return f"wheel build failed: {why}"
        venv = root / "venv"
        ok, why = _run([sys.executable, "-m", "venv", "--clear", str(venv)], 120.0)
        if not ok:
            return f"venv creation failed: {why}"
        wheel = [str(p) for p in wheels.glob("*.whl")]
        ok, why = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *wheel], _BUILD_TIMEOUT)
        if not ok:
            return f"wheel install failed: {why}"
    return ""
