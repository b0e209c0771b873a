"""With no sandbox configured, project trust decides a new thread's sandbox, as Codex 0.169 does
(`projects."<path>".trust_level` in config.toml; measured against the binary's thread/start answer):

* unknown directory (a git repository or not): read-only, profile `:read-only`, approval on-request;
* trusted (the directory itself, or the repository root it lies in): workspace-write, profile `:workspace`;
* explicitly untrusted: workspace-write, and approval `untrusted` unless an approval policy is configured;
* a configured `sandbox_mode` wins (no profile reported); `default_permissions` picks a built-in profile.

Every directory is made under the test's tmp folder and looked up by its own key, so nothing above the
system temp folder (a `.git` there, say) changes an answer. Runs against Codex too (PYCODEX_TEST_TARGET=codex).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DEAD_MODEL_URL
from tests.support.fake_model import model_config

READ_ONLY = ("readOnly", {"id": ":read-only", "extends": None})
WORKSPACE = ("workspaceWrite", {"id": ":workspace", "extends": None})


def _git_init(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)


def _trust(path: Path, level: str) -> str:
    return f'\n[projects."{path}"]\ntrust_level = "{level}"\n'


async def _start(app_server: Any, cwd: Path) -> tuple[str, Any, str]:
    client = await app_server(experimental=True)
    started = await client.call("thread/start", {"cwd": str(cwd)})
    return started["sandbox"]["type"], started["activePermissionProfile"], started["approvalPolicy"]


@pytest.mark.parametrize("git", [False, True], ids=["plain", "git"])
async def test_an_unknown_project_starts_read_only(
    app_server: Any, codex_home: Path, tmp_path: Path, git: bool
) -> None:
    project = tmp_path / "project"
    _git_init(project) if git else project.mkdir()
    model_config(codex_home, DEAD_MODEL_URL, approval_policy=None, sandbox_mode=None)
    sandbox, profile, approval = await _start(app_server, project)
    assert (sandbox, profile) == READ_ONLY
    assert approval == "on-request"


@pytest.mark.parametrize("where", ["itself", "repo root"])
async def test_a_trusted_project_starts_workspace_write(
    app_server: Any, codex_home: Path, tmp_path: Path, where: str
) -> None:
    project = tmp_path / "project"
    _git_init(project)
    cwd = project if where == "itself" else project / "src" / "deep"
    cwd.mkdir(parents=True, exist_ok=True)
    model_config(codex_home, DEAD_MODEL_URL, approval_policy=None, sandbox_mode=None,
                 extra=_trust(project, "trusted"))
    sandbox, profile, approval = await _start(app_server, cwd)
    assert (sandbox, profile) == WORKSPACE
    assert approval == "on-request"


async def test_trust_does_not_reach_a_plain_subdirectory(app_server: Any, codex_home: Path, tmp_path: Path) -> None:
    """Outside a repository only the directory's own entry counts (its project root is itself)."""
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    model_config(codex_home, DEAD_MODEL_URL, approval_policy=None, sandbox_mode=None,
                 extra=_trust(project, "trusted"))
    sandbox, profile, _ = await _start(app_server, project / "sub")
    assert (sandbox, profile) == READ_ONLY


@pytest.mark.parametrize("approval", [None, "on-request"])
async def test_an_untrusted_project_asks_unless_told_otherwise(
    app_server: Any, codex_home: Path, tmp_path: Path, approval: str | None
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    model_config(codex_home, DEAD_MODEL_URL, approval_policy=approval, sandbox_mode=None,
                 extra=_trust(project, "untrusted"))
    sandbox, profile, policy = await _start(app_server, project)
    assert (sandbox, profile) == WORKSPACE
    assert policy == (approval or "untrusted")


async def test_a_configured_sandbox_wins_over_trust(app_server: Any, codex_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    model_config(codex_home, DEAD_MODEL_URL, approval_policy=None, sandbox_mode="workspace-write")
    sandbox, profile, _ = await _start(app_server, project)
    assert (sandbox, profile) == ("workspaceWrite", None)


async def test_default_permissions_names_the_profile(app_server: Any, codex_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    model_config(codex_home, DEAD_MODEL_URL, approval_policy=None, sandbox_mode=None,
                 extra='default_permissions = ":workspace"\n')
    sandbox, profile, _ = await _start(app_server, project)
    assert (sandbox, profile) == WORKSPACE


async def test_start_params_override_trust(app_server: Any, codex_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    model_config(codex_home, DEAD_MODEL_URL, approval_policy=None, sandbox_mode=None)
    client = await app_server(experimental=True)
    by_mode = await client.call("thread/start", {"cwd": str(project), "sandbox": "workspace-write"})
    assert (by_mode["sandbox"]["type"], by_mode["activePermissionProfile"]) == ("workspaceWrite", None)
    by_profile = await client.call("thread/start", {"cwd": str(project), "permissions": ":workspace"})
    assert (by_profile["sandbox"]["type"], by_profile["activePermissionProfile"]) == WORKSPACE
