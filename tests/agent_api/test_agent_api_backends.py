"""The wrapper driving a real agent CLI through real turns against the loopback fake model.

Parametrized over the backends: ``codex`` (the reference 0.169.0 binary) and ``pycodex`` (``python -m
pycodex exec``, which these tests expect once ``pycodex exec`` exists).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agent_api import (
    BackendConfig,
    BackendError,
    CodexBackend,
    EventKind,
    ExecBackend,
    PycodexBackend,
    RunRequest,
)
from agent_api.pinned import EXTERNAL_SANDBOX_WARNING
from agent_api.values import EXT_EXTERNAL_SANDBOX, EXT_FORK, EXT_RESUME
from tests.support.agent_api_runs import start_run
from tests.support.fake_model import FakeModel, message, model_config

__all__ = ["start_run"]

RUN_TIMEOUT = 60.0
WAIT = 90.0
MISSING_UUID = "01a22ac9-0000-7000-8000-000000000000"  # well-formed, never created
StartRun = Callable[[ExecBackend, RunRequest], Awaitable[Any]]


@pytest.fixture(params=[pytest.param("codex", marks=pytest.mark.codex), "pycodex"])
async def setup(
    request: pytest.FixtureRequest, tmp_path: Path, fake_model: Callable[..., Awaitable[FakeModel]]
) -> tuple[ExecBackend, FakeModel, Path]:
    model = await fake_model({"responses": [{"output": [message("MOCK-REPLY from the fake model")]}],
                              "when_exhausted": "repeat_last"})
    home = tmp_path / "codex_home"
    model_config(home, model.url)
    work = tmp_path / "work"
    work.mkdir()
    if request.param == "codex":
        codex_bin: Path = request.getfixturevalue("codex_bin")
        backend: ExecBackend = CodexBackend(BackendConfig(binary=str(codex_bin), codex_home=home))
    else:
        backend = PycodexBackend(BackendConfig(codex_home=home))
    return backend, model, work


async def run_ok(start_run: StartRun, backend: ExecBackend, req: RunRequest) -> tuple[list[Any], Any]:
    handle = await start_run(backend, req)
    events = await asyncio.wait_for(handle.events.collect(), WAIT)
    completion = await asyncio.wait_for(handle.completion, WAIT)
    return events, completion


async def run_failing(start_run: StartRun, backend: ExecBackend, req: RunRequest) -> tuple[list[Any], str]:
    handle = await start_run(backend, req)
    events = await asyncio.wait_for(handle.events.collect(), WAIT)
    with pytest.raises(BackendError) as caught:
        await asyncio.wait_for(handle.completion, WAIT)
    return events, caught.value.message


def last_request_text(model: FakeModel) -> str:
    return json.dumps(model.requests()[-1]["body"])


async def first_session(start_run: StartRun, backend: ExecBackend, work: Path) -> str:
    _, completion = await run_ok(start_run, backend, RunRequest(prompt="first prompt alpha", working_dir=work,
                                                                timeout=RUN_TIMEOUT))
    assert completion.session_id
    return str(completion.session_id)


async def test_real_turn(start_run: StartRun, setup: tuple[ExecBackend, FakeModel, Path]) -> None:
    backend, model, work = setup
    events, completion = await run_ok(start_run, backend, RunRequest(prompt="say hi", working_dir=work,
                                                                     timeout=RUN_TIMEOUT))
    assert completion.exit_code == 0
    assert completion.final_text == "MOCK-REPLY from the fake model"
    assert events[0].kind is EventKind.STATUS and events[0].session_id == completion.session_id
    assert [e.text for e in events if e.kind is EventKind.TEXT_OUTPUT] == ["MOCK-REPLY from the fake model"]
    assert not [e for e in events if e.kind is EventKind.ERROR]
    assert "say hi" in last_request_text(model)


@pytest.mark.parametrize("selector", ["last", "id"])
async def test_resume(start_run: StartRun, setup: tuple[ExecBackend, FakeModel, Path], selector: str) -> None:
    backend, model, work = setup
    session = await first_session(start_run, backend, work)
    ext = {"selector": "last"} if selector == "last" else {"selector": "id", "id": session}
    events, completion = await run_ok(start_run, backend, RunRequest(
        prompt="second prompt beta", working_dir=work, timeout=RUN_TIMEOUT, extensions={EXT_RESUME: ext}))
    assert completion.session_id == session
    assert events[0].session_id == session
    sent = last_request_text(model)
    assert "first prompt alpha" in sent and "second prompt beta" in sent  # the history was loaded


@pytest.mark.parametrize("selector", ["last", "id"])
async def test_fork(start_run: StartRun, setup: tuple[ExecBackend, FakeModel, Path], selector: str) -> None:
    backend, model, work = setup
    session = await first_session(start_run, backend, work)
    ext = {"selector": "last"} if selector == "last" else {"selector": "id", "id": session}
    events, completion = await run_ok(start_run, backend, RunRequest(
        prompt="forked prompt gamma", working_dir=work, timeout=RUN_TIMEOUT, extensions={EXT_FORK: ext}))
    assert completion.session_id and completion.session_id != session
    assert events[0].session_id == completion.session_id
    assert completion.final_text == "MOCK-REPLY from the fake model"
    assert "MOCK-REPLY from the fake model" in "".join(e.text or "" for e in events if e.kind is EventKind.TEXT_OUTPUT)
    sent = last_request_text(model)
    assert "first prompt alpha" in sent and "forked prompt gamma" in sent


async def test_resume_last_without_session_fails_before_spawning(
    start_run: StartRun, setup: tuple[ExecBackend, FakeModel, Path], tmp_path: Path
) -> None:
    backend, model, work = setup
    await first_session(start_run, backend, work)
    other = tmp_path / "other"
    other.mkdir()
    before = len(model.requests())
    events, msg = await run_failing(start_run, backend, RunRequest(
        prompt="hello", working_dir=other, timeout=RUN_TIMEOUT, extensions={EXT_RESUME: {"selector": "last"}}))
    assert msg == "no session found"
    assert [e.message for e in events if e.kind is EventKind.ERROR] == ["no session found"]
    assert len(model.requests()) == before  # Codex would silently have started a new session


@pytest.mark.parametrize("missing", [MISSING_UUID, "thread-123"])
async def test_resume_unknown_id(
    start_run: StartRun, setup: tuple[ExecBackend, FakeModel, Path], missing: str
) -> None:
    backend, model, work = setup
    events, msg = await run_failing(start_run, backend, RunRequest(
        prompt="hello", working_dir=work, timeout=RUN_TIMEOUT,
        extensions={EXT_RESUME: {"selector": "id", "id": missing}}))
    assert msg == "session not found"
    assert [e.message for e in events if e.kind is EventKind.ERROR] == ["session not found"]
    assert events[-1].kind is EventKind.ERROR
    assert model.requests() == []


async def test_fork_unknown_id(start_run: StartRun, setup: tuple[ExecBackend, FakeModel, Path]) -> None:
    backend, model, work = setup
    events, msg = await run_failing(start_run, backend, RunRequest(
        prompt="hello", working_dir=work, timeout=RUN_TIMEOUT,
        extensions={EXT_FORK: {"selector": "id", "id": MISSING_UUID}}))
    assert msg == "session not found"
    assert [e.message for e in events if e.kind is EventKind.ERROR] == ["session not found"]
    assert model.requests() == []


async def test_resume_last_through_a_symlinked_working_dir(
    start_run: StartRun, setup: tuple[ExecBackend, FakeModel, Path], tmp_path: Path
) -> None:
    backend, _model, work = setup
    session = await first_session(start_run, backend, work)
    link = tmp_path / "link"
    link.symlink_to(work, target_is_directory=True)
    _, completion = await run_ok(start_run, backend, RunRequest(
        prompt="again", working_dir=link, timeout=RUN_TIMEOUT, extensions={EXT_RESUME: {"selector": "last"}}))
    assert completion.session_id == session


async def test_external_sandbox_run(start_run: StartRun, setup: tuple[ExecBackend, FakeModel, Path]) -> None:
    backend, _model, work = setup
    bypass = type(backend)(dataclasses.replace(backend.config, allow_external_sandbox_exec=True))
    events, completion = await run_ok(start_run, bypass, RunRequest(
        prompt="outside the sandbox", working_dir=work, timeout=RUN_TIMEOUT,
        extensions={EXT_EXTERNAL_SANDBOX: True}))
    assert completion.exit_code == 0 and completion.final_text == "MOCK-REPLY from the fake model"
    assert events[0].message == EXTERNAL_SANDBOX_WARNING
    assert events[1].session_id == completion.session_id
