"""gitInfo from the .git files: sha, branch and origin for a repository, nothing for a folder that is not one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app_server.store.git_info import read_git_info

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=GIT_ENV, timeout=30).stdout.strip()  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    _git(path, "commit", "-q", "--allow-empty", "-m", "first")
    _git(path, "remote", "add", "origin", "https://example.com/r.git")
    return path


def test_a_repository_gives_its_sha_branch_and_origin_from_a_sub_folder(repo: Path) -> None:
    (repo / "sub").mkdir()
    assert read_git_info(str(repo / "sub")) == {"sha": _git(repo, "rev-parse", "HEAD"), "branch": "main",
                                                 "originUrl": "https://example.com/r.git"}  # fmt: skip


def test_packed_refs_and_a_detached_head_are_read(repo: Path) -> None:
    sha = _git(repo, "rev-parse", "HEAD")
    _git(repo, "pack-refs", "--all")
    assert read_git_info(str(repo))["sha"] == sha  # type: ignore[index]
    _git(repo, "checkout", "-q", "--detach")
    assert read_git_info(str(repo)) == {"sha": sha, "branch": None, "originUrl": "https://example.com/r.git"}


def test_a_folder_that_is_not_a_repository_has_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # whatever lies above the temp folder
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / ".git").mkdir()  # an empty .git folder is no repository, for git or for us
    assert read_git_info(str(tmp_path / "plain")) is None
    assert read_git_info(None) is None
