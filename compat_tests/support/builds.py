"""Build specs of the compat matrix: parse one, and turn it into an executable (building it if needed).

Specs:

* ``current``: this checkout, run as ``python -m pycodex`` (``$PYCODEX_COMPAT_CURRENT`` overrides the
  command line, split like a shell would).
* ``pycodex@REF``: a release from ``compat_tests/releases.txt`` (``@last`` is the newest) or any git
  tag/commit of this repository: a ``git archive`` export installed into its own venv in the cache, with
  no checkout on the path, then checked to be that export (:func:`_verify`: imported from the venv, the
  export's version, every installed module byte-equal to the export's).
* ``codex@VERSION``: the ``@openai/codex`` npm package, installed with npm and kept in the cache (keyed
  by version) as its platform folder only (support/codex_install.py); ``codex@latest`` asks the registry
  which version that is.
* ``path:/abs/bin``: any executable with ``app-server`` and ``exec-server`` subcommands.

:func:`resolve_build` raises :class:`BuildError` with the whole reason (npm's or pip's full error output)
when a build cannot be had; ``pycodex compat`` turns that into exit status 2. The cache is
``$PYCODEX_COMPAT_CACHE``, else ``$XDG_CACHE_HOME/pycodex-compat``, else ``~/.cache/pycodex-compat``;
builds are made under a file lock so parallel workers build each one once.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from compat_tests.support import codex_install

__all__ = [
    "CODEX_BIN_REL",
    "REPO_ROOT",
    "RESOLVED_ENV",
    "Build",
    "BuildError",
    "BuildMismatch",
    "Pairing",
    "cache_dir",
    "cache_lock",
    "commit_build",
    "find_build",
    "last_release",
    "parse_spec",
    "releases",
    "resolve_build",
    "resolved_env",
    "run_step",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
RELEASES_FILE = REPO_ROOT / "compat_tests" / "releases.txt"
CODEX_BIN_REL = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
#: ``pycodex compat`` resolves every build once and hands them to its pytest workers as JSON here.
RESOLVED_ENV = "PYCODEX_COMPAT_RESOLVED"
_BUILD_TIMEOUT = 900.0
_NPM_TIMEOUT = 600.0
#: What the build and verification steps of a release must not inherit: any of these would let the
#: checkout (or another environment) stand in for the export.
_SCRUBBED = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "PIP_TARGET")
_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]*")


class BuildError(Exception):
    """A build that cannot be had; the message is the whole reason (a tool's full error output)."""


class BuildMismatch(BuildError):
    """A release build that installed but is not the exported commit: never a skip, always an error."""


@dataclass(frozen=True)
class Build:
    """One executable under test; ``argv`` is the prefix before the subcommand, ``name`` the spec.

    ``resolved`` says what the spec turned out to be (``0.171.0`` for ``codex@latest``, ``0.2.0
    (3d24172)`` for ``pycodex@last``); empty for ``current`` and ``path:``.
    """

    name: str
    argv: tuple[str, ...]
    resolved: str = ""

    def command(self, *args: str) -> list[str]:
        """The argv of subcommand ``args``."""
        return [*self.argv, *args]

    @property
    def label(self) -> str:
        """``spec → resolved`` (or the bare spec), as the report prints it."""
        return f"{self.name} → {self.resolved}" if self.resolved else self.name


@dataclass(frozen=True)
class Pairing:
    """Who serves which side of one compat run."""

    app: Build
    executor: Build
    #: The build whose ``relay`` subcommand runs the development registry and rendezvous (always current).
    relay: Build

    @property
    def label(self) -> str:
        """``APP app-server -> EXEC exec-server``."""
        return f"{self.app.name} app-server -> {self.executor.name} exec-server"


def parse_spec(spec: str) -> tuple[str, str]:
    """``(kind, argument)`` of a spec; raises ValueError with the accepted forms on anything else."""
    if spec == "current":
        return "current", ""
    for kind in ("pycodex", "codex"):
        arg = spec.removeprefix(f"{kind}@")
        # A git ref or npm version is one plain word: never an option (`-x`) nor whitespace.
        if spec.startswith(f"{kind}@") and _REF.fullmatch(arg):
            return kind, arg
    if spec.startswith("path:") and spec[5:].startswith("/"):
        return "path", spec[5:]
    raise ValueError(
        f"bad build spec {spec!r}: expected current, pycodex@REF, codex@VERSION, codex@latest or path:/abs/bin"
    )


def cache_dir() -> Path:
    """Where builds are kept (see the module docstring)."""
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
    """The spec of the newest release (``pycodex@VERSION``)."""
    return f"pycodex@{releases()[-1][0]}"


def find_build(spec: str) -> tuple[Build | None, str]:
    """The build ``spec`` names, or None with the reason it is unavailable (for a test's skip).

    A release that installed as something else raises :class:`BuildMismatch`: running it would report
    another build's results under its name.
    """
    try:
        return resolve_build(spec), ""
    except BuildMismatch:
        raise
    except BuildError as exc:
        return None, str(exc)


def resolve_build(spec: str) -> Build:
    """The build ``spec`` names, built or installed if needed; BuildError (the whole reason) if it cannot be."""
    try:
        kind, arg = parse_spec(spec)
    except ValueError as exc:
        raise BuildError(str(exc)) from None
    known = json.loads(os.environ.get(RESOLVED_ENV) or "{}")
    if spec in known:
        return Build(spec, tuple(known[spec]["argv"]), str(known[spec]["resolved"]))
    if kind == "current":
        env = os.environ.get("PYCODEX_COMPAT_CURRENT", "").strip()
        return Build(spec, tuple(shlex.split(env)) if env else (sys.executable, "-m", "pycodex"))
    if kind == "path":
        if not _executable(Path(arg)):
            raise BuildError(f"{spec}: no executable file at {arg}")
        return Build(spec, (arg,))
    if kind == "codex":
        return _codex_build(spec, arg)
    return commit_build(spec, arg)


def resolved_env(builds: list[Build]) -> str:
    """The :data:`RESOLVED_ENV` value that hands ``builds`` to pytest's workers without resolving again."""
    return json.dumps({b.name: {"argv": list(b.argv), "resolved": b.resolved} for b in builds})


@contextmanager
def cache_lock(name: str) -> Iterator[Path]:
    """An exclusive lock on ``CACHE/name.lock``; yields ``CACHE/name``: one installer or builder at a time
    fills a cache entry (builds, the ACP adapter, the SDK clients)."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held for at most one bounded build or install
        try:
            yield root / name
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def run_step(
    argv: list[str], timeout: float, *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> str:
    """Run a build or install step and return its stdout; BuildError with its whole stderr when it fails."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, env=env, cwd=cwd
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"{shlex.join(argv)}: {exc}") from None
    if done.returncode != 0:
        output = (done.stderr.strip() or done.stdout.strip() or "(no output)").replace("\n", "\n    ")
        raise BuildError(f"{shlex.join(argv)} exited {done.returncode}:\n    {output}")
    return done.stdout.strip()


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _npm_version(prefix: Path) -> str:
    package = prefix / "node_modules/@openai/codex/package.json"
    return str(json.loads(package.read_text()).get("version", "")) if package.is_file() else ""


def _codex_build(spec: str, version: str) -> Build:
    if version == "latest":
        try:
            version = run_step(["npm", "view", "@openai/codex", "version"], 60.0)
        except BuildError as exc:
            raise BuildError(f"{spec}: cannot ask the npm registry for the latest version: {exc}") from None
    resolved = version if spec == "codex@latest" else ""
    # The repository's own npm copy (installed by .ci/run) serves its version without another install.
    repo_binary = codex_install.npm_tree_binary(REPO_ROOT)
    if _npm_version(REPO_ROOT) == version and _executable(repo_binary):
        return Build(spec, (str(repo_binary),), resolved)
    with cache_lock(f"codex-{version}") as entry:
        try:
            binary = codex_install.install(version, entry, _NPM_TIMEOUT)
        except codex_install.CodexInstallError as exc:
            raise BuildError(f"{spec}: {exc}") from None
    installed = codex_install.installed_version(entry)
    if installed and installed != version and resolved == "":
        resolved = installed  # a range such as codex@0.171 names the release it installed
    return Build(spec, (str(binary),), resolved)


def commit_build(spec: str, ref: str, *, shared_site: tuple[Path, ...] = ()) -> Build:
    """``pycodex@REF`` (``spec``), built and verified if it is not cached; BuildError if it cannot be.

    ``shared_site`` (``pycodex compat bisect --shared-deps``): the venv gets only the export, installed
    with ``--no-deps``, and imports its dependencies from these site-packages folders (a ``.pth`` file).
    The code is still the commit's and checked to be; its dependencies are today's. Cached apart from the
    full builds (``pycodex-COMMIT12-shared``) so neither stands in for the other.
    """
    known = dict(releases())
    label = releases()[-1][0] if ref == "last" else ref
    target = known.get(label, label)
    try:
        sha = run_step(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--verify", "--quiet", f"{target}^{{commit}}"], 30.0
        )
    except BuildError:
        raise BuildError(
            f"{spec}: {target!r} is not a commit of this repository ({REPO_ROOT}); releases: "
            + ", ".join(f"{v} ({c[:7]})" for v, c in known.items())
        ) from None
    with cache_lock(f"pycodex-{sha[:12]}" + ("-shared" if shared_site else "")) as root:
        try:
            _ensure_release(sha, root, shared_site)
        except BuildError as exc:
            raise BuildError(f"{spec} (commit {sha}): {exc}") from None
    resolved = f"{label} ({sha[:7]})" if ref == "last" else sha[:7]
    resolved += " (shared deps)" if shared_site else ""
    # `pycodex compat` puts this checkout on PYTHONPATH so pytest finds compat_tests; a release must not
    # see it (it would run today's code), nor may the processes it spawns.
    binary = root / "venv" / "bin" / "pycodex"
    return Build(spec, ("env", "-u", "PYTHONPATH", "-u", "PYTHONHOME", str(binary)), resolved)


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _export(sha: str, into: Path) -> Path:
    """``git archive`` of ``sha`` extracted under ``into``; the export's root."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "archive", "--format=tar", sha],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"git archive failed: {exc}") from None
    if archive.returncode != 0:
        raise BuildError(f"git archive failed: {archive.stderr.decode(errors='replace').strip()}")
    source = into / "src"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(source, filter="data")
    return source


def _ensure_release(sha: str, root: Path, shared_site: tuple[Path, ...]) -> None:
    """``root/venv`` holds commit ``sha``, installed and verified (``root/build.json`` records that)."""
    record = root / "build.json"
    # A shared-deps build is only as good as the folders it borrows: gone or others, it is built again.
    shared = {"shared_site": [str(folder) for folder in shared_site]} if shared_site else {}
    if record.is_file() and all(folder.is_dir() for folder in shared_site):
        known = json.loads(record.read_text())
        if known.get("commit") == sha and known.get("shared_site") == shared.get("shared_site"):
            return
    root.mkdir(parents=True, exist_ok=True)
    # The scratch folder is outside the checkout so nothing run from it can import the checkout.
    with tempfile.TemporaryDirectory(prefix="pycodex-release-") as scratch:
        source = _export(sha, Path(scratch))
        venv = root / "venv"
        if not (venv / "bin" / "pycodex").is_file() or not _verify_quietly(source, venv):
            _install(source, venv, Path(scratch), shared_site)
        facts = _verify(source, venv)
    record.write_text(json.dumps({"commit": sha, **facts, **shared}, indent=1) + "\n")


def _install(source: Path, venv: Path, scratch: Path, shared_site: tuple[Path, ...]) -> None:
    env = _clean_env()
    pip = ["--without-pip"] if shared_site else []  # pip comes from the shared site too
    run_step([sys.executable, "-m", "venv", "--clear", *pip, str(venv)], 120.0, env=env, cwd=scratch)
    python = str(venv / "bin" / "python")
    if shared_site:
        # Plain paths in a .pth are appended after the venv's own site-packages, so the export wins, and
        # the shared folders' own .pth files (an editable checkout's finder) are not run.
        purelib = run_step(
            [python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], 60.0
        )
        lines = "".join(f"{folder}\n" for folder in shared_site)
        (Path(purelib) / "_pycodex_compat_shared.pth").write_text(lines, encoding="utf-8")
    # A plain (not editable) install of the export's folder: pip builds its wheel in isolation.
    deps = ["--no-deps"] if shared_site else []
    argv = [python, "-m", "pip", "install", "-q", "--no-cache-dir", *deps, str(source)]
    try:
        run_step(argv, _BUILD_TIMEOUT, env=env, cwd=scratch)
    except BuildError as exc:
        raise BuildError(f"pip install of the export failed: {exc}") from None


_PROBE = """
import importlib.metadata as md, json, sys, pycodex
name = sys.argv[1]
dist = md.distribution(name)
files = [str(f) for f in dist.files or ()]
print(json.dumps({"file": pycodex.__file__, "version": dist.version, "module_version": pycodex.__version__,
                  "site": str(dist.locate_file("")), "files": files}))
"""


def _verify_quietly(source: Path, venv: Path) -> bool:
    try:
        _verify(source, venv)
    except BuildError:
        return False
    return True


def _verify(source: Path, venv: Path) -> dict[str, str]:
    """Check that ``venv`` runs the export at ``source``; its facts, or BuildError naming expected vs got."""
    project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = str(project["name"]), str(project["version"])
    python = str(venv / "bin" / "python")
    # -I: neither PYTHONPATH nor the working directory can put a checkout on sys.path.
    out = run_step([python, "-I", "-c", _PROBE, name], 60.0, env=_clean_env(), cwd=venv)
    got = json.loads(out)
    problems = []
    site = Path(got["site"]).resolve()
    if not Path(got["file"]).resolve().is_relative_to(venv.resolve()):
        problems.append(f"pycodex imports from {got['file']}, expected inside {venv}")
    if got["version"] != version or got["module_version"] != version:
        problems.append(
            f"installed {name} {got['version']} (pycodex.__version__ {got['module_version']}), "
            f"expected {version} from the export's pyproject.toml"
        )
    modules = [f for f in got["files"] if f.endswith(".py") and (source / f).is_file()]
    if "pycodex/__init__.py" not in modules:
        problems.append(f"{name}'s RECORD lists no pycodex/__init__.py of the export")
    differing = [f for f in modules if (site / f).read_bytes() != (source / f).read_bytes()]
    if differing:
        problems.append(f"{len(differing)} installed files differ from the export, e.g. {differing[0]}")
    if problems:
        raise BuildMismatch("the installed build is not the exported commit: " + "; ".join(problems))
    return {"name": name, "version": version, "file": got["file"]}
