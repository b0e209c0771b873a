"""Request validation: pinned messages, the fail-closed key gate, and no raw path in any message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_api import (
    BackendConfig,
    BackendError,
    CodexBackend,
    Gateway,
    InvalidRequest,
    RunRequest,
    UnsupportedCapability,
)
from agent_api.errors import UnknownBackend
from agent_api.values import (
    EXT_ADD_DIRS,
    EXT_APPROVAL_POLICY,
    EXT_EXTERNAL_SANDBOX,
    EXT_FORK,
    EXT_MODEL,
    EXT_NON_INTERACTIVE,
    EXT_RESUME,
    EXT_SANDBOX_MODE,
)

SECRET_DIR = "SECRET-PATH-DO-NOT-ECHO"


def normalize(extensions: dict[str, Any], tmp_path: Path, **config: Any) -> Any:
    backend = CodexBackend(BackendConfig(binary="/nonexistent/codex", **config))
    return backend.normalize(RunRequest(prompt="hi", working_dir=tmp_path, extensions=extensions))


def invalid(extensions: dict[str, Any], tmp_path: Path, **config: Any) -> str:
    with pytest.raises(InvalidRequest) as caught:
        normalize(extensions, tmp_path, **config)
    assert SECRET_DIR not in str(caught.value)
    return caught.value.message


def test_empty_prompt(tmp_path: Path) -> None:
    backend = CodexBackend(BackendConfig(binary="/nonexistent/codex"))
    with pytest.raises(InvalidRequest) as caught:
        backend.normalize(RunRequest(prompt="  \n"))
    assert str(caught.value) == "invalid request: prompt must not be empty"


def test_unknown_key_wins_and_is_checked_in_sorted_order(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedCapability) as caught:
        normalize({"agent_api.zzz": 1, "agent_api.aaa": 2, EXT_MODEL: 7}, tmp_path)
    assert caught.value.capability == "agent_api.aaa"
    assert str(caught.value) == "unsupported capability for codex: agent_api.aaa"
    with pytest.raises(UnsupportedCapability):
        normalize({EXT_EXTERNAL_SANDBOX: True}, tmp_path)  # only with allow_external_sandbox_exec


@pytest.mark.parametrize("value", [7, "", "   ", "m" * 129, SECRET_DIR * 10])
def test_model_errors_never_echo(tmp_path: Path, value: Any) -> None:
    assert invalid({EXT_MODEL: value}, tmp_path) == f"invalid {EXT_MODEL}"


def test_model_is_trimmed_and_request_model_shorthand(tmp_path: Path) -> None:
    assert normalize({EXT_MODEL: "  gpt-x "}, tmp_path).model == "gpt-x"
    backend = CodexBackend(BackendConfig(binary="/x"))
    assert backend.normalize(RunRequest(prompt="hi", model="m1")).model == "m1"
    with pytest.raises(InvalidRequest):
        backend.normalize(RunRequest(prompt="hi", model="m1", extensions={EXT_MODEL: "m2"}))


def test_policy_messages(tmp_path: Path) -> None:
    assert invalid({EXT_NON_INTERACTIVE: "yes"}, tmp_path) == f"{EXT_NON_INTERACTIVE} must be a boolean"
    assert invalid({EXT_APPROVAL_POLICY: "sometimes"}, tmp_path) == (
        f'{EXT_APPROVAL_POLICY} must be one of: untrusted | on-failure | on-request | never (got "sometimes")')
    assert invalid({EXT_SANDBOX_MODE: f"/tmp/{SECRET_DIR}"}, tmp_path) == (
        f'{EXT_SANDBOX_MODE} must be one of: read-only | workspace-write | danger-full-access (got "<str>")')
    assert invalid({EXT_APPROVAL_POLICY: "on-request"}, tmp_path) == (
        f'{EXT_APPROVAL_POLICY} must be "never" when {EXT_NON_INTERACTIVE} is true')
    assert invalid({EXT_EXTERNAL_SANDBOX: True, EXT_NON_INTERACTIVE: False}, tmp_path,
                   allow_external_sandbox_exec=True) == (
        f"{EXT_EXTERNAL_SANDBOX}=true must not be combined with {EXT_NON_INTERACTIVE}=false")
    assert invalid({EXT_EXTERNAL_SANDBOX: True, EXT_SANDBOX_MODE: "read-only"}, tmp_path,
                   allow_external_sandbox_exec=True) == (
        f"{EXT_EXTERNAL_SANDBOX}=true must not be combined with backend.codex.exec.* keys")
    policy = normalize({}, tmp_path).policy
    assert policy.non_interactive and policy.sandbox_mode == "workspace-write" and not policy.external_sandbox


def test_add_dirs(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    got = normalize({EXT_ADD_DIRS: {"dirs": ["a", " ./b/../a ", str(tmp_path / "b")]}}, tmp_path).policy.add_dirs
    assert got == (tmp_path / "a", tmp_path / "b")  # relative joined, folded, duplicates dropped
    assert invalid({EXT_ADD_DIRS: ["a"]}, tmp_path) == f"invalid {EXT_ADD_DIRS}"
    assert invalid({EXT_ADD_DIRS: {"dirs": ["a"], "x": 1}}, tmp_path) == f"invalid {EXT_ADD_DIRS}"
    assert invalid({EXT_ADD_DIRS: {"dirs": []}}, tmp_path) == f"invalid {EXT_ADD_DIRS}.dirs"
    assert invalid({EXT_ADD_DIRS: {"dirs": ["a"] * 17}}, tmp_path) == f"invalid {EXT_ADD_DIRS}.dirs"
    assert invalid({EXT_ADD_DIRS: {"dirs": ["a", SECRET_DIR]}}, tmp_path) == f"invalid {EXT_ADD_DIRS}.dirs[1]"
    assert invalid({EXT_ADD_DIRS: {"dirs": ["  "]}}, tmp_path) == f"invalid {EXT_ADD_DIRS}.dirs[0]"
    assert invalid({EXT_ADD_DIRS: {"dirs": [SECRET_DIR * 100]}}, tmp_path) == f"invalid {EXT_ADD_DIRS}.dirs[0]"
    (tmp_path / "file").write_text("")
    assert invalid({EXT_ADD_DIRS: {"dirs": ["file"]}}, tmp_path) == f"invalid {EXT_ADD_DIRS}.dirs[0]"


@pytest.mark.parametrize("key", [EXT_RESUME, EXT_FORK])
def test_session_selector_messages(tmp_path: Path, key: str) -> None:
    cases: list[tuple[Any, str]] = [
        ("last", f"{key} must be an object"),
        ({"selector": "last", "zeta": 1, "beta": 2}, f"{key} has unknown key: beta"),
        ({}, f"{key}.selector is required"),
        ({"selector": 1}, f"{key}.selector must be a string"),
        ({"selector": "newest"}, f"{key}.selector must be one of: last | id"),
        ({"selector": "id"}, f'{key}.id is required when selector is "id"'),
        ({"selector": "id", "id": 5}, f"{key}.id must be a string"),
        ({"selector": "id", "id": "  "}, f"{key}.id must be non-empty"),
        ({"selector": "last", "id": "x"}, f'{key}.id must be absent when selector is "last"'),
    ]
    for value, message in cases:
        assert invalid({key: value}, tmp_path) == message
    assert normalize({key: {"selector": "id", "id": " t-1 "}}, tmp_path).policy.__getattribute__(
        "resume" if key == EXT_RESUME else "fork").id == " t-1 "  # passed on untrimmed


def test_resume_and_fork_exclusive_and_fork_rejections(tmp_path: Path) -> None:
    last = {"selector": "last"}
    assert invalid({EXT_RESUME: last, EXT_FORK: last}, tmp_path) == (
        f"{EXT_RESUME} and {EXT_FORK} are mutually exclusive")
    (tmp_path / "a").mkdir()
    with pytest.raises(BackendError, match=r"^backend error: model override unsupported for codex fork$"):
        normalize({EXT_FORK: last, EXT_MODEL: "m"}, tmp_path)
    with pytest.raises(BackendError) as caught:
        normalize({EXT_FORK: last, EXT_ADD_DIRS: {"dirs": ["a"]}}, tmp_path)
    assert caught.value.message == "add_dirs unsupported for codex fork"


def test_env_timeout_and_working_dir_defaults(tmp_path: Path) -> None:
    backend = CodexBackend(BackendConfig(binary="/x", env={"A": "1", "B": "1"}, default_timeout=5,
                                         default_working_dir=tmp_path))
    got = backend.normalize(RunRequest(prompt="hi", env={"B": "2"}, working_dir="sub/.."))
    assert got.env == {"A": "1", "B": "2"}
    assert got.timeout == 5
    assert got.working_dir == Path.cwd()  # a relative request dir resolves against the run-start cwd
    assert backend.normalize(RunRequest(prompt="hi")).working_dir == tmp_path
    assert backend.normalize(RunRequest(prompt="hi", timeout=0)).timeout is None
    with pytest.raises(InvalidRequest):
        backend.normalize(RunRequest(prompt="hi", timeout=-1))


def test_capabilities_are_advertised_per_backend() -> None:
    codex = CodexBackend(BackendConfig(binary="/x"))
    assert {"agent_api.run", "agent_api.control.cancel.v1", "backend.codex.exec_stream", EXT_RESUME, EXT_FORK,
            EXT_ADD_DIRS} <= codex.capabilities
    assert EXT_EXTERNAL_SANDBOX not in codex.capabilities
    assert EXT_EXTERNAL_SANDBOX in CodexBackend(BackendConfig(allow_external_sandbox_exec=True)).capabilities
    from agent_api import PycodexBackend

    assert "backend.pycodex.exec_stream" in PycodexBackend().capabilities
    assert set(codex.extension_keys) <= codex.capabilities


async def test_gateway() -> None:
    gateway = Gateway()
    gateway.register(CodexBackend(BackendConfig(binary="/x")))
    with pytest.raises(InvalidRequest, match="backend already registered: codex"):
        gateway.register(CodexBackend())
    with pytest.raises(UnknownBackend):
        await gateway.run("claude_code", RunRequest(prompt="hi"))
    with pytest.raises(InvalidRequest):
        await gateway.run("codex", RunRequest(prompt=""))
    assert gateway.kinds() == ["codex"]


def test_env_and_working_dir_are_checked_before_spawning(tmp_path: Path) -> None:
    backend = CodexBackend(BackendConfig(binary="/x"))
    for env in ({"A=B": "1"}, {"": "1"}, {"A": 1}, {"A": "x\x00y"}):
        with pytest.raises(InvalidRequest) as caught:
            backend.normalize(RunRequest(prompt="hi", working_dir=tmp_path, env=env))  # type: ignore[arg-type]
        assert caught.value.message.startswith("env keys and values must be strings")
    with pytest.raises(InvalidRequest) as missing:
        backend.normalize(RunRequest(prompt="hi", working_dir=tmp_path / SECRET_DIR))
    assert missing.value.message == "working_dir must be an existing directory"
