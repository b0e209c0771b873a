"""Project trust as Codex 0.169 keeps it, and the default sandbox and approval policy it decides.

Trust lives in the user's config.toml: ``[projects."<path>"] trust_level = "trusted"`` (or ``"untrusted"``).
A directory's trust is looked up, first hit wins, under the directory's own path (as written and with
symlinks resolved), then its project root (the nearest ``project_root_markers`` ancestor, ``.git`` by
default), then its repository root (for a linked worktree: the main checkout). No entry means unknown.

With no ``sandbox_mode`` (nor ``default_permissions``) configured, Codex 0.169 starts a thread

* in a trusted or an explicitly untrusted project: ``workspace-write`` (profile ``:workspace``);
* anywhere else (an unknown directory, a git repository or not): ``read-only`` (profile ``:read-only``),

and with no ``approval_policy`` configured, an explicitly untrusted project gets ``untrusted`` (ask before
anything but known-safe commands), every other directory ``on-request``. Measured against the binary:
``thread/start`` answers ``sandbox`` and ``activePermissionProfile`` so.

The app-server protocol has no trust-prompt methods: Codex's TUI asks locally (not over ``--remote``) and
records the answer in config.toml. Codex 0.169's app-server also records a repository root as trusted
when a ``thread/start`` names a cwd in an unknown git repository and asks for a sandbox that can write
there; pycodex does not: a client's sandbox choice is not the user's trust decision, and trust turns on
the repository's own ``.codex`` config, hooks and exec policies for every later session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app_server.config.effective import project_root
from pycodex.git_repo import git_repo_root

__all__ = [
    "BUILT_IN_PROFILES", "TrustDefaults", "project_trust", "repo_root_for_trust", "trust_defaults",
]

#: Codex's built-in permission profiles and the sandbox mode each one is.
BUILT_IN_PROFILES = {":read-only": "read-only", ":workspace": "workspace-write",
                     ":danger-full-access": "danger-full-access"}
_PROFILE_OF_MODE = {mode: profile for profile, mode in BUILT_IN_PROFILES.items()}


@dataclass(frozen=True, slots=True)
class TrustDefaults:
    """A thread's sandbox, permission profile and approval policy before request overrides."""

    sandbox_mode: str
    #: The active profile Codex reports (None when ``sandbox_mode`` was configured directly).
    permission_profile: str | None
    approval_policy: str


def _keys(path: Path) -> list[str]:
    """Codex's lookup keys of a path: the resolved spelling first, then the one as written."""
    written = str(path)
    resolved = os.path.realpath(path)
    return [resolved] if resolved == written else [resolved, written]


def _gitdir_of(dot_git: Path) -> Path | None:
    """The git directory a ``.git`` entry names: itself, or the ``gitdir:`` target of a ``.git`` file."""
    if dot_git.is_dir():
        return dot_git if (dot_git / "HEAD").is_file() else None  # an empty `.git` folder is no repository
    try:
        text = dot_git.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    target = Path(first[len("gitdir:"):].strip(" \t\r\n"))
    return target if target.is_absolute() else (dot_git.parent / target)


def repo_root_for_trust(cwd: Path) -> Path | None:
    """The repository root trust is recorded under: the enclosing work tree's root (the product's one
    repository check, ``pycodex.git_repo``), or for a linked worktree (a ``.git`` file naming
    ``<main>/.git/worktrees/<name>``) the main checkout. None outside a repository."""
    directory = git_repo_root(cwd)
    if directory is None:
        return None
    dot_git = directory / ".git"
    gitdir = _gitdir_of(dot_git) if dot_git.is_file() else None
    commondir = gitdir / "commondir" if gitdir is not None else None
    if gitdir is not None and commondir is not None and commondir.is_file():  # trust follows the main checkout
        try:
            common = Path(commondir.read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError):
            return directory
        common = common if common.is_absolute() else gitdir / common
        main = Path(os.path.normpath(common))
        if main.name == ".git" and (main / "HEAD").is_file():
            return main.parent
    return directory


def _trust_table(raw: Mapping[str, object]) -> dict[str, str]:
    projects = raw.get("projects")
    if not isinstance(projects, Mapping):
        return {}
    table: dict[str, str] = {}
    for key, entry in projects.items():
        level = entry.get("trust_level") if isinstance(entry, Mapping) else None
        if isinstance(key, str) and level in ("trusted", "untrusted"):
            table[key] = str(level)
    return table


def project_trust(raw: Mapping[str, object], cwd: Path, markers: Sequence[str] = (".git",)) -> str | None:
    """``"trusted"``, ``"untrusted"`` or None (unknown) for ``cwd`` under the merged config ``raw``."""
    table = _trust_table(raw)
    if not table:
        return None
    candidates = [cwd, project_root(cwd, markers) if markers else cwd]
    repo = repo_root_for_trust(cwd)
    if repo is not None:
        candidates.append(repo)
    for directory in candidates:
        for key in _keys(directory):
            if key in table:
                return table[key]
    return None


def trust_defaults(raw: Mapping[str, object], cwd: Path, *, sandbox_mode: str | None,
                   approval_policy: str | None, markers: Sequence[str] = (".git",)) -> TrustDefaults:
    """The sandbox, profile and approval policy a thread in ``cwd`` starts with, from config and trust."""
    trust = project_trust(raw, cwd, markers)
    approval = approval_policy or ("untrusted" if trust == "untrusted" else "on-request")
    if sandbox_mode is not None:
        return TrustDefaults(sandbox_mode, None, approval)
    configured = raw.get("default_permissions")
    if isinstance(configured, str) and configured in BUILT_IN_PROFILES:
        return TrustDefaults(BUILT_IN_PROFILES[configured], configured, approval)
    mode = "workspace-write" if trust is not None else "read-only"
    return TrustDefaults(mode, _PROFILE_OF_MODE[mode], approval)
