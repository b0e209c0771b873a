"""``pycodex exec``'s Git check stops where git stops: at a ``GIT_CEILING_DIRECTORIES`` entry."""

from __future__ import annotations

from pathlib import Path

from pycodex.git_repo import git_repo_root
from tests.support.hermetic import stop_walks_at


def test_the_walk_finds_the_nearest_repository(tmp_path: Path) -> None:
    stop_walks_at(tmp_path)
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert git_repo_root(inner, {}) == tmp_path.resolve()


def test_the_walk_does_not_go_up_into_a_ceiling(tmp_path: Path) -> None:
    stop_walks_at(tmp_path)
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert git_repo_root(inner, {"GIT_CEILING_DIRECTORIES": f"relative:{tmp_path / 'a'}"}) is None
    # A ceiling above the repository changes nothing, and the start itself is always looked at.
    assert git_repo_root(inner, {"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}) == tmp_path.resolve()
    assert git_repo_root(tmp_path, {"GIT_CEILING_DIRECTORIES": str(tmp_path)}) == tmp_path.resolve()
