"""Tests that do not depend on what lies above the temp folder.

The product walks up from a folder to its ancestors (and so out of the test's temp folder) in three places:
the project root (``project_root_markers``, default ``.git``: AGENTS.md, ``.codex/config.toml`` layers, repo
skills in ``.agents/skills`` and ``.codex/skills``), the ignore rules of ``fuzzyFileSearch`` (``.gitignore``
files up to the enclosing repository) and ``pycodex exec``'s Git check. None of them has a ceiling to set
(no ``GIT_CEILING_DIRECTORIES``, no configurable stop), so a test stays hermetic in one of two ways:

* ``below_a_repository_root`` / ``stop_walks_at``: the test's folder sits below a folder with an empty
  ``.git``, so every walk stops there, before the system temp folder;
* ``ABSENT_MARKER``: a test of "no project root at all" names a root marker no folder has, instead of
  relying on no ``.git`` anywhere above the temp folder.

What is left, a test of "not inside any repository" with the default marker (the ``pycodex exec`` Git check),
calls ``require_outside_any_repository``: it fails with the culprit named rather than with a confusing diff.
tests/pycodex/test_hermetic.py runs the affected tests with a ``.git``, AGENTS.md, ``.codex``, ``.agents`` and
``.gitignore`` placed above their temp folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: A `project_root_markers` entry that no folder has: "no project root", whatever lies above the temp folder.
ABSENT_MARKER = ".pycodex-test-absent-root-marker"


def stop_walks_at(folder: Path) -> Path:
    """Make `folder` a repository root (an empty `.git` folder): walks up from below it stop here."""
    (folder / ".git").mkdir(exist_ok=True)
    return folder


def below_a_repository_root(tmp_path: Path) -> Path:
    """A fresh folder one below `tmp_path`, which becomes a repository root (see ``stop_walks_at``).

    For tests that search or list the folder itself, where a `.git` inside it would show up in the results.
    """
    stop_walks_at(tmp_path)
    inner = tmp_path / "t"
    inner.mkdir()
    return inner


def repositories_above(path: Path) -> list[Path]:
    """The ancestors of `path` (itself included) holding a `.git`, nearest first."""
    path = path.resolve()
    return [folder for folder in (path, *path.parents) if (folder / ".git").exists()]


def require_outside_any_repository(path: Path) -> None:
    """Fail, naming the culprit, when `path` is inside a Git repository (a `.git` in any ancestor).

    For checks of behaviour outside every repository with the default marker: the product offers no ceiling,
    so they need a temp folder with no `.git` above it (pass ``--basetemp`` elsewhere if one is there).
    """
    found = repositories_above(path)
    if found:
        pytest.fail(
            f"{found[0] / '.git'} lies above the temp folder {path}: this check needs a folder outside every "
            "Git repository (pass --basetemp=DIR with no .git above DIR)",
            pytrace=False,
        )
