"""Codex releases from npm, kept in the compat cache as the platform package's own files only.

``npm install @openai/codex@VERSION`` fetches a small launcher package and the platform package
``@openai/codex-linux-ARCH``, whose ``vendor/TRIPLE/`` folder holds what runs: ``bin/codex`` (and its
code-mode host), ``codex-path/rg`` and ``codex-resources/bwrap``, next to ``codex-package.json`` (the
version). The cache keeps that folder alone, laid out as npm laid it out so the binary finds its resources
where it looks for them, and drops the voice models and the npm tree around it: a CI cache of several
releases then holds binaries, not node_modules folders. Installs happen in a scratch prefix beside the
cache entry and are moved into place whole, so an interrupted or failed install never looks cached.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["CodexInstallError", "cached_binary", "install", "installed_version", "npm_tree_binary"]

#: Parts of the platform folder the matrix never runs (the TUI's voice input models, ~50 MB).
_DROPPED = ("codex-resources/voice",)


class CodexInstallError(Exception):
    """npm failed, or installed something without the platform binary; the message is the whole reason."""


def _arch_triple() -> tuple[str, str]:
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine(), "x64"
    )
    return arch, "x86_64" if arch == "x64" else "aarch64"


def _platform_dir(prefix: Path) -> Path:
    arch, triple = _arch_triple()
    return prefix / f"node_modules/@openai/codex-linux-{arch}/vendor/{triple}-unknown-linux-musl"


def npm_tree_binary(prefix: Path) -> Path:
    """Where an ``npm install --prefix PREFIX @openai/codex`` tree keeps the binary (the repo's copy)."""
    return _platform_dir(prefix) / "bin" / "codex"


def cached_binary(entry: Path) -> Path:
    """The binary of a cache entry made by :func:`install`."""
    return entry / "bin" / "codex"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def installed_version(entry: Path) -> str:
    """The release a cache entry holds (from its ``codex-package.json``), or "" when it is not one."""
    meta = entry / "codex-package.json"
    if not (meta.is_file() and _executable(cached_binary(entry))):
        return ""
    return str(json.loads(meta.read_text(encoding="utf-8")).get("version", ""))


def install(version: str, entry: Path, timeout: float) -> Path:
    """Install ``@openai/codex@VERSION`` as the cache entry ``entry`` (caller holds its lock); its binary.

    An entry that already holds a release is kept. Anything else there (an older layout that kept the
    whole npm tree, a half-moved folder) is replaced.
    """
    if installed_version(entry):
        return cached_binary(entry)
    shutil.rmtree(entry, ignore_errors=True)
    entry.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{entry.name}.npm-", dir=entry.parent) as scratch:
        prefix = Path(scratch)
        argv = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(prefix)]
        try:
            done = subprocess.run(
                [*argv, f"@openai/codex@{version}"],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CodexInstallError(f"npm install failed: {exc}") from None
        if done.returncode != 0:
            output = (done.stderr.strip() or done.stdout.strip() or "(no output)").replace("\n", "\n    ")
            raise CodexInstallError(f"npm install failed: npm exited {done.returncode}:\n    {output}")
        source = _platform_dir(prefix)
        if not _executable(source / "bin" / "codex"):
            raise CodexInstallError(
                f"npm installed @openai/codex@{version} but there is no {npm_tree_binary(Path('PREFIX'))}"
            )
        for part in _DROPPED:
            shutil.rmtree(source / part, ignore_errors=True)
        if not (source / "codex-package.json").is_file():
            # Older releases ship no layout file; record the version npm installed in the same shape.
            launcher = prefix / "node_modules/@openai/codex/package.json"
            got = json.loads(launcher.read_text(encoding="utf-8")).get("version", version)
            (source / "codex-package.json").write_text(json.dumps({"version": got}), encoding="utf-8")
        source.rename(entry)  # same filesystem: the entry appears whole or not at all
    return cached_binary(entry)
