"""Project trust lookup (app_server/config/trust.py), as Codex 0.169 keeps it: the directory's own key (as written
and resolved), its project root, then its repository root (a linked worktree's main checkout). Every path is
made under the test's tmp folder and every trust entry names one of them, so what lies above the system temp
folder cannot change an answer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from app_server.config.trust import project_trust, repo_root_for_trust, trust_defaults


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   cwd=cwd, check=True, capture_output=True, timeout=30)


def test_a_linked_worktree_takes_the_main_checkouts_trust(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    _git("init", "-q", cwd=main)
    _git("commit", "-q", "--allow-empty", "-m", "c", cwd=main)
    _git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    assert repo_root_for_trust(tmp_path / "wt") == main
    raw = {"projects": {str(main): {"trust_level": "trusted"}}}
    assert project_trust(raw, tmp_path / "wt") == "trusted"
    assert trust_defaults(raw, tmp_path / "wt", sandbox_mode=None, approval_policy=None).sandbox_mode == \
        "workspace-write"


def test_a_symlinked_directory_is_found_under_its_resolved_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert project_trust({"projects": {str(real): {"trust_level": "untrusted"}}}, tmp_path / "link") == "untrusted"
    # and the spelling as written counts too
    link_key = {"projects": {str(tmp_path / "link"): {"trust_level": "trusted"}}}
    assert project_trust(link_key, tmp_path / "link") == "trusted"


def test_an_empty_git_folder_is_no_repository(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "sub").mkdir()
    assert repo_root_for_trust(project / "sub") is None


def test_no_entry_or_an_unknown_level_is_unknown(tmp_path: Path) -> None:
    assert project_trust({}, tmp_path) is None
    assert project_trust({"projects": {str(tmp_path): {"trust_level": "maybe"}}}, tmp_path) is None
    unknown = trust_defaults({}, tmp_path, sandbox_mode=None, approval_policy=None)
    assert (unknown.sandbox_mode, unknown.permission_profile, unknown.approval_policy) == (
        "read-only", ":read-only", "on-request")
