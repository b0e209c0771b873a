"""Tests that do not depend on what lies above the temp folder.

The product walks up from a folder to its ancestors (and so out of the test's temp folder) in three places:
the project root (``project_root_markers``, default ``.git``: AGENTS.md, ``.codex/config.toml`` layers, repo
skills in ``.agents/skills`` and ``.codex/skills``), the ignore rules of ``fuzzyFileSearch`` (``.gitignore``
files up to the enclosing repository) and ``pycodex exec``'s Git check. The Git check honours git's own
``GIT_CEILING_DIRECTORIES``, which its test sets; the other two have no ceiling to set, so a test of them
stays hermetic in one of two ways:

* ``below_a_repository_root`` / ``stop_walks_at``: the test's folder sits below a folder with a minimal
  ``.git`` (``HEAD`` only), so every walk stops there, before the system temp folder;
* ``ABSENT_MARKER``: a test of "no project root at all" names a root marker no folder has, instead of
  relying on no ``.git`` anywhere above the temp folder.

tests/pycodex/test_hermetic.py runs the affected tests with a ``.git``, AGENTS.md, ``.codex``, ``.agents`` and
``.gitignore`` placed above their temp folder.
"""

from __future__ import annotations

from pathlib import Path

#: A `project_root_markers` entry that no folder has: "no project root", whatever lies above the temp folder.
ABSENT_MARKER = ".pycodex-test-absent-root-marker"


def stop_walks_at(folder: Path) -> Path:
    """Make `folder` a repository root (a `.git` folder holding `HEAD`, the least Codex takes for one; see
    pycodex/git_repo.py): walks up from below it stop here."""
    (folder / ".git").mkdir(exist_ok=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return folder


def below_a_repository_root(tmp_path: Path) -> Path:
    """A fresh folder one below `tmp_path`, which becomes a repository root (see ``stop_walks_at``).

    For tests that search or list the folder itself, where a `.git` inside it would show up in the results.
    """
    stop_walks_at(tmp_path)
    inner = tmp_path / "t"
    inner.mkdir()
    return inner
