"""The one repository check (pycodex/git_repo.py) gives Codex 0.169's answers, seen on the binary with
`codex exec` run from `X/c`, and `pycodex exec` refuses where Codex refuses.

Each case sits in its own folder under tmp_path, which is a `GIT_CEILING_DIRECTORIES` entry: whatever lies
above the system temp folder cannot change an answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pycodex.git_repo import git_repo_root

REPO = Path(__file__).resolve().parents[2]


def _empty_dir(x: Path) -> None:
    (x / ".git").mkdir()


def _dir_without_head(x: Path) -> None:
    (x / ".git" / "objects").mkdir(parents=True)
    (x / ".git" / "refs").mkdir()


def _head_only(x: Path) -> None:
    (x / ".git").mkdir()
    (x / ".git" / "HEAD").write_text("")


def _head_is_a_folder(x: Path) -> None:
    (x / ".git" / "HEAD").mkdir(parents=True)


def _empty_file(x: Path) -> None:
    (x / ".git").write_text("")


def _dangling_link(x: Path) -> None:
    (x / ".git").symlink_to(x / "nowhere")


def _link_to_a_git_folder(x: Path) -> None:
    (x / "real").mkdir()
    (x / "real" / "HEAD").write_text("ref: refs/heads/main\n")
    (x / ".git").symlink_to(x / "real")


def _git_init(x: Path) -> None:
    subprocess.run(["git", "init", "-q", str(x)], check=True, timeout=30, env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull})


CASES: list[tuple[str, Callable[[Path], None], bool]] = [
    ("empty .git folder", _empty_dir, False),
    (".git folder without HEAD", _dir_without_head, False),
    ("dangling .git link", _dangling_link, False),
    (".git folder with an empty HEAD", _head_only, True),
    ("HEAD is a folder", _head_is_a_folder, True),
    ("empty .git file", _empty_file, True),
    (".git link to a git folder", _link_to_a_git_folder, True),
    ("git init", _git_init, True),
]


@pytest.mark.parametrize(("make", "is_repo"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_what_counts_as_a_repository_is_what_codex_counts(
    tmp_path: Path, make: Callable[[Path], None], is_repo: bool
) -> None:
    x = tmp_path / "x"
    (x / "c").mkdir(parents=True)
    make(x)
    ceiling = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    assert git_repo_root(x / "c", ceiling) == (x.resolve() if is_repo else None)
    assert git_repo_root(x, ceiling) == (x.resolve() if is_repo else None)  # the start itself counts


def test_a_folder_that_is_no_repository_does_not_stop_the_walk(tmp_path: Path) -> None:
    """Codex: an empty `.git` below a repository is passed over, the outer repository answers."""
    _head_only(tmp_path)
    (tmp_path / "s" / "c").mkdir(parents=True)
    _empty_dir(tmp_path / "s")
    assert git_repo_root(tmp_path / "s" / "c", {"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}) == tmp_path.resolve()


def _exec(cwd: Path, home: Path, ceiling: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_", "PYCODEX_"))}
    env.update(CODEX_HOME=str(home), PYCODEX_FSYNC="0", PYTHONPATH=str(REPO), GIT_CEILING_DIRECTORIES=str(ceiling))
    return subprocess.run([sys.executable, "-m", "pycodex", "exec", "--model", "scripted", "hi"], cwd=cwd, env=env,
                          text=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=60, check=False)


def test_exec_refuses_below_an_empty_git_folder_and_runs_below_a_git_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    empty, linked = tmp_path / "empty", tmp_path / "linked"
    for x, make in ((empty, _empty_dir), (linked, _empty_file)):
        (x / "c").mkdir(parents=True)
        make(x)
    refused = _exec(empty / "c", home, tmp_path)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.endswith("Not inside a trusted directory and --skip-git-repo-check was not specified.\n")
    ran = _exec(linked / "c", home, tmp_path)
    assert ran.returncode == 0, ran.stderr
