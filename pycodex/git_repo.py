"""Is this folder inside a Git repository? One answer for the whole product: Codex 0.169's.

Every "is this a repository" question goes through here: ``pycodex exec``'s check (refused outside one
unless ``--skip-git-repo-check``), the project root when ``project_root_markers`` holds ``.git`` (AGENTS.md,
``.codex/config.toml`` layers, repo skills), the repository whose ignore rules ``fuzzyFileSearch`` applies,
and where a thread's ``gitInfo`` is read.

A folder is a repository root when its ``.git`` entry is (observed on the 0.169 binary, ``codex exec`` and
``config/read`` run from below such a folder):

* a file, whatever it holds (a worktree's or submodule's ``gitdir:`` link; Codex does not read it);
* a folder with an entry named ``HEAD`` in it (a file or anything else).

An empty ``.git`` folder, one without ``HEAD`` and a dangling ``.git`` link are not, and the walk goes on
to the parent. The walk starts at the folder itself (its parent for a file) and goes up to ``/``. Codex's
AGENTS.md lookup alone also stops at an empty ``.git`` folder; pycodex gives the one answer everywhere.

Codex has no ceiling; pycodex also honours git's ``GIT_CEILING_DIRECTORIES`` (absolute paths separated by
``:``): the walk does not go up into one (the start itself is always looked at), as git does. Tests set it
so that what lies above the system temp folder cannot change their answer; unset, the two agree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["DOT_GIT", "git_repo_root", "is_repository_root"]

DOT_GIT = ".git"


def is_repository_root(folder: Path) -> bool:
    """Whether ``folder/.git`` makes ``folder`` a repository root (a file, or a folder holding ``HEAD``)."""
    dot = folder / DOT_GIT
    try:
        if dot.is_file():
            return True
        return dot.is_dir() and os.path.lexists(dot / "HEAD")
    except OSError:  # unreadable: not a repository we can use
        return False


def _ceilings(environ: Mapping[str, str]) -> set[Path]:
    raw = environ.get("GIT_CEILING_DIRECTORIES", "")
    return {Path(p).resolve() for p in raw.split(os.pathsep) if os.path.isabs(p)}


def git_repo_root(start: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """The nearest repository root at or above ``start`` (symlinks resolved), or None (``environ``: where
    ``GIT_CEILING_DIRECTORIES`` is read, default the process's environment)."""
    environ = os.environ if environ is None else environ
    try:
        start = start.resolve()
        if not start.is_dir():
            start = start.parent
    except OSError:
        return None
    ceilings = _ceilings(environ)
    for folder in (start, *start.parents):
        if folder != start and folder in ceilings:
            return None
        if is_repository_root(folder):
            return folder
    return None
