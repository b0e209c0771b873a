"""Run-time behaviour against the fake backend: cancel and timeout kill the process group, closing or
dropping the events never does, failures are classified and redacted, fork goes through app-server."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agent_api import (
    BackendConfig,
    BackendError,
    CodexBackend,
    Completion,
    EventKind,
    ExecBackend,
    RunHandle,
    RunRequest,
)
from agent_api.pinned import EXTERNAL_SANDBOX_WARNING, MODEL_RUNTIME_REJECTION
from agent_api.values import EXT_EXTERNAL_SANDBOX, EXT_FORK, EXT_RESUME
from tests.support.agent_api_runs import assert_no_leak, fake_backend, start_run

__all__ = ["start_run"]

WAIT = 30.0
StartRun = Callable[[ExecBackend, RunRequest], Awaitable[RunHandle]]


def req(tmp_path: Path, scenario: str, **kw: Any) -> RunRequest:
    env = {"FAKE_CODEX_SCENARIO": scenario, **kw.pop("env", {})}
    return RunRequest(prompt=kw.pop("prompt", "hi"), working_dir=tmp_path, env=env, **kw)


async def finish(handle: RunHandle) -> tuple[list[Any], Completion | BackendError]:
    events = await asyncio.wait_for(handle.events.collect(), WAIT)
    try:
        return events, await asyncio.wait_for(handle.completion, WAIT)
    except BackendError as exc:
        return events, exc


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def wait_for_file(path: Path) -> list[int]:
    for _ in range(1000):  # bounded: at most ~20 s
        if path.exists():
            return [int(pid) for pid in path.read_text().split()]
        await asyncio.sleep(0.02)
    raise AssertionError("the fake never wrote its pids")


async def wait_gone(pids: list[int]) -> None:
    for _ in range(500):
        if not any(alive(pid) for pid in pids):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"still running: {[p for p in pids if alive(p)]}")


@pytest.mark.parametrize("kind", ["codex", "pycodex"])
async def test_ok_run_reports_text_handle_and_final_text(start_run: StartRun, tmp_path: Path, kind: str) -> None:
    env = {"FAKE_CODEX_EXPECT_PROMPT": "hi", "FAKE_CODEX_EXPECT_SANDBOX": "workspace-write",
           "FAKE_CODEX_EXPECT_APPROVAL": "never", "FAKE_CODEX_EXPECT_MODEL": "m1"}
    handle = await start_run(fake_backend(kind), req(tmp_path, "ok", env=env, model="m1"))
    events, completion = await finish(handle)
    assert isinstance(completion, Completion), events
    assert completion.exit_code == 0 and completion.final_text == "FAKE-REPLY: hi"
    assert completion.session_id == "thread-1" == events[0].session_id
    assert {e.agent_kind for e in events} == {kind}
    assert [e.text for e in events if e.kind is EventKind.TEXT_OUTPUT] == ["FAKE-REPLY: hi"]


@pytest.mark.parametrize("how", ["cancel", "timeout"])
async def test_cancel_and_timeout_kill_the_process_group(start_run: StartRun, tmp_path: Path, how: str) -> None:
    pid_file = tmp_path / "pids"
    timeout = 1.0 if how == "timeout" else None
    handle = await start_run(fake_backend(), req(tmp_path, "block_until_killed", timeout=timeout,
                                                 env={"FAKE_CODEX_PID_FILE": str(pid_file)}))
    first = await asyncio.wait_for(anext(handle.events), WAIT)
    assert first.session_id == "thread-1"
    pids = await wait_for_file(pid_file)
    assert all(alive(pid) for pid in pids)
    if how == "cancel":
        handle.cancel.cancel()
        handle.cancel.cancel()  # idempotent
    events, outcome = await finish(handle)
    assert isinstance(outcome, BackendError)
    expected = "cancelled" if how == "cancel" else "codex backend error: timeout (details redacted when unsafe)"
    assert outcome.message == expected
    if how == "timeout":
        assert [e.message for e in events if e.kind is EventKind.ERROR] == [expected]
    await wait_gone(pids)  # the grandchild too: no orphans
    assert_no_leak(events, outcome)


async def test_closing_events_drains_without_killing(start_run: StartRun, tmp_path: Path) -> None:
    env = {"FAKE_CODEX_BUFFERED_EVENT_COUNT": "3000", "FAKE_CODEX_BUFFERED_EVENT_PADDING_BYTES": "1024"}
    handle = await start_run(fake_backend(), req(tmp_path, "buffered_then_exit", env=env))
    await asyncio.wait_for(anext(handle.events), WAIT)
    await handle.events.aclose()
    completion = await asyncio.wait_for(handle.completion, WAIT)
    assert completion.exit_code == 0  # the child ran to its end: it was not killed
    assert [e async for e in handle.events] == []


async def test_dropping_events_drains_without_killing(tmp_path: Path) -> None:
    env = {"FAKE_CODEX_BUFFERED_EVENT_COUNT": "3000", "FAKE_CODEX_BUFFERED_EVENT_PADDING_BYTES": "1024"}
    handle = await fake_backend().run(req(tmp_path, "buffered_then_exit", env=env))
    completion, cancel = handle.completion, handle.cancel
    try:
        await asyncio.wait_for(anext(handle.events), WAIT)
        del handle  # the only reference to the event stream goes away
        gc.collect()
        result = await asyncio.wait_for(completion, WAIT)
        assert result.exit_code == 0
    finally:
        cancel.cancel()
        await asyncio.gather(completion, return_exceptions=True)


async def test_stalled_consumer_keeps_completion_pending(start_run: StartRun, tmp_path: Path) -> None:
    env = {"FAKE_CODEX_BUFFERED_EVENT_COUNT": "2000", "FAKE_CODEX_BUFFERED_EVENT_PADDING_BYTES": "1024"}
    handle = await start_run(fake_backend(), req(tmp_path, "buffered_then_exit", env=env))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(handle.completion), 0.2)
    events, completion = await finish(handle)
    assert isinstance(completion, Completion) and completion.exit_code == 0
    assert len(events) == 2001


async def test_nonzero_exit_is_ok_with_a_redacted_terminal_error(start_run: StartRun, tmp_path: Path) -> None:
    events, completion = await finish(await start_run(fake_backend(), req(tmp_path, "nonzero_exit")))
    assert isinstance(completion, Completion) and completion.exit_code == 3
    assert events[-1].kind is EventKind.ERROR
    assert events[-1].message == "codex exited non-zero: exit_code=3 (stderr redacted)"
    assert_no_leak(events)


async def test_parse_error_and_tools_do_not_leak(start_run: StartRun, tmp_path: Path) -> None:
    for scenario in ("parse_error_midstream", "tool_lifecycle_ok"):
        events, completion = await finish(await start_run(fake_backend(), req(tmp_path, scenario)))
        assert isinstance(completion, Completion)
        assert_no_leak(events)
    assert [e.kind for e in events if e.channel == "tool"] == [EventKind.TOOL_CALL, EventKind.TOOL_RESULT]


async def test_model_runtime_rejection(start_run: StartRun, tmp_path: Path) -> None:
    handle = await start_run(fake_backend(), req(tmp_path, "model_runtime_rejection_after_thread_started", model="m1"))
    events, outcome = await finish(handle)
    assert isinstance(outcome, BackendError) and outcome.message == MODEL_RUNTIME_REJECTION
    assert [e.message for e in events if e.kind is EventKind.ERROR] == [MODEL_RUNTIME_REJECTION]
    assert_no_leak(events, outcome)


async def test_non_resume_error_lines_are_events(start_run: StartRun, tmp_path: Path) -> None:
    events, completion = await finish(await start_run(fake_backend(), req(tmp_path, "transport_error_then_exit")))
    assert isinstance(completion, Completion) and completion.exit_code == 1
    errors = [e.message for e in events if e.kind is EventKind.ERROR]
    assert errors == ["Reconnecting... 1/2 (transport failure)", "codex exited non-zero: exit_code=1 (stderr redacted)"]
    assert any(e.message == "turn failed" for e in events)


async def test_spawn_failure_is_one_error_event(start_run: StartRun, tmp_path: Path) -> None:
    backend = CodexBackend(BackendConfig(binary=str(tmp_path / "SECRET-BIN-PATH")))
    events, outcome = await finish(await start_run(backend, RunRequest(prompt="hi", working_dir=tmp_path)))
    assert isinstance(outcome, BackendError)
    assert outcome.message == "codex backend error: spawn (details redacted when unsafe)"
    assert [(e.kind, e.message) for e in events] == [(EventKind.ERROR, outcome.message)]


@pytest.mark.parametrize(("selector", "threads", "expected"), [
    ({"selector": "last"}, "[]", "no session found"),
    ({"selector": "id", "id": "thread-999"}, None, "session not found"),
])
async def test_resume_precheck_fails_before_spawning_exec(
    start_run: StartRun, tmp_path: Path, selector: dict[str, str], threads: str | None, expected: str
) -> None:
    env = {"FAKE_CODEX_THREADS": threads} if threads is not None else {}
    # The "ok" scenario would succeed: only the pre-check can produce the failure.
    handle = await start_run(fake_backend(), req(tmp_path, "ok", env=env, extensions={EXT_RESUME: selector}))
    events, outcome = await finish(handle)
    assert isinstance(outcome, BackendError) and outcome.message == expected
    assert [(e.kind, e.message) for e in events] == [(EventKind.ERROR, expected)]


async def test_resume_runs_without_precheck_when_disabled(start_run: StartRun, tmp_path: Path) -> None:
    backend = fake_backend(precheck_sessions=False)
    env = {"FAKE_CODEX_THREADS": "[]"}
    handle = await start_run(backend, req(tmp_path, "resume_last_not_found", env=env,
                                          extensions={EXT_RESUME: {"selector": "last"}}))
    events, outcome = await finish(handle)
    assert isinstance(outcome, BackendError) and outcome.message == "no session found"  # from the exit
    assert [e.message for e in events if e.kind is EventKind.ERROR] == ["no session found"]


async def test_fork_through_app_server(start_run: StartRun, tmp_path: Path) -> None:
    for selector in ({"selector": "last"}, {"selector": "id", "id": "thread-123"}):
        handle = await start_run(fake_backend(), RunRequest(prompt="hello", working_dir=tmp_path,
                                                            extensions={EXT_FORK: selector}))
        events, completion = await finish(handle)
        assert isinstance(completion, Completion), events
        assert completion.session_id == "fork-of-thread-123" == events[0].session_id
        assert completion.final_text == "FORK-REPLY: hello"
        assert [e.text for e in events if e.kind is EventKind.TEXT_OUTPUT] == ["FORK-REPLY: hello"]


@pytest.mark.parametrize(("scenario", "threads", "selector", "expected"), [
    ("ok", "[]", {"selector": "last"}, "no session found"),
    ("fork_not_found", None, {"selector": "id", "id": "4b5e6c1a-0000-4000-8000-000000000000"}, "session not found"),
    ("approval_during_turn", None, {"selector": "last"}, "approval required"),
])
async def test_fork_failures(
    start_run: StartRun, tmp_path: Path, scenario: str, threads: str | None, selector: dict[str, str], expected: str
) -> None:
    env = {"FAKE_CODEX_APP_SERVER_SCENARIO": scenario}
    if threads is not None:
        env["FAKE_CODEX_THREADS"] = threads
    handle = await start_run(fake_backend(), RunRequest(prompt="hello", working_dir=tmp_path, env=env,
                                                        extensions={EXT_FORK: selector}))
    events, outcome = await finish(handle)
    assert isinstance(outcome, BackendError) and outcome.message == expected
    assert [e.message for e in events if e.kind is EventKind.ERROR] == [expected]
    assert events[-1].kind is EventKind.ERROR


@pytest.mark.parametrize("how", ["cancel", "timeout"])
async def test_fork_cancel_and_timeout(start_run: StartRun, tmp_path: Path, how: str) -> None:
    env = {"FAKE_CODEX_APP_SERVER_SCENARIO": "block_turn"}
    handle = await start_run(fake_backend(), RunRequest(
        prompt="hello", working_dir=tmp_path, env=env, timeout=1.0 if how == "timeout" else None,
        extensions={EXT_FORK: {"selector": "last"}}))
    first = await asyncio.wait_for(anext(handle.events), WAIT)
    assert first.session_id == "fork-of-thread-123"
    if how == "cancel":
        handle.cancel.cancel()
    events, outcome = await finish(handle)
    assert isinstance(outcome, BackendError)
    assert all(e.kind is not EventKind.TEXT_OUTPUT for e in events)
    assert outcome.message == ("cancelled" if how == "cancel" else
                               "codex backend error: timeout (details redacted when unsafe)")


def test_no_orphan_pids_helper() -> None:
    assert alive(os.getpid())


async def test_external_sandbox_uses_the_bypass_flag_and_warns_first(start_run: StartRun, tmp_path: Path) -> None:
    backend = fake_backend(allow_external_sandbox_exec=True)
    handle = await start_run(backend, req(tmp_path, "ok", env={"FAKE_CODEX_EXPECT_DANGEROUS_BYPASS": "1"},
                                          extensions={EXT_EXTERNAL_SANDBOX: True}))
    events, completion = await finish(handle)
    assert isinstance(completion, Completion) and completion.exit_code == 0, events
    assert events[0].message == EXTERNAL_SANDBOX_WARNING
    assert events[1].session_id == "thread-1"


async def test_cancel_while_gated_wins_and_cancel_after_completion_is_a_no_op(
    start_run: StartRun, tmp_path: Path
) -> None:
    gated = await start_run(fake_backend(), req(tmp_path, "ok"))
    await asyncio.wait_for(anext(gated.events), WAIT)
    # Nobody reads on: the child exits, but the completion is held by the unread events.
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(gated.completion), 0.2)
    gated.cancel.cancel()
    _, outcome = await finish(gated)
    assert isinstance(outcome, BackendError) and outcome.message == "cancelled"
    done = await start_run(fake_backend(), req(tmp_path, "ok"))
    _, completion = await finish(done)
    done.cancel.cancel()
    assert isinstance(completion, Completion) and await done.completion == completion


@pytest.mark.parametrize("how", ["wait_for", "timeout", "future_cancel"])
async def test_giving_up_on_the_completion_kills_the_child(start_run: StartRun, tmp_path: Path, how: str) -> None:
    """A caller's own timeout around ``await handle.completion`` cancels the run (it used to leave the
    child running, with ``cancel()`` a no-op on the cancelled future)."""
    pid_file = tmp_path / "pids"
    handle = await start_run(fake_backend(), req(tmp_path, "block_until_killed",
                                                 env={"FAKE_CODEX_PID_FILE": str(pid_file)}))
    pids = await wait_for_file(pid_file)
    assert all(alive(pid) for pid in pids)
    if how == "wait_for":
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(handle.completion, 0.1)
    elif how == "timeout":
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await handle.completion
    else:
        handle.completion.cancel()
    assert handle.completion.cancelled()
    await asyncio.wait_for(handle.ended.wait(), WAIT)  # nobody reads the events: the run still ends
    await wait_gone(pids)
    handle.cancel.cancel()  # still safe


async def test_async_with_cancels_an_unfinished_run_and_returns_once_its_child_is_gone(
    start_run: StartRun, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pids"
    handle = await start_run(fake_backend(), req(tmp_path, "block_until_killed",
                                                 env={"FAKE_CODEX_PID_FILE": str(pid_file)}))
    async with handle as run:
        first = await asyncio.wait_for(anext(run.events), WAIT)
        assert first.session_id == "thread-1"
        pids = await wait_for_file(pid_file)
    assert not any(alive(pid) for pid in pids)  # gone by the time the block is left
    with pytest.raises(BackendError, match="cancelled"):
        await handle.completion


async def test_async_with_leaves_a_finished_run_as_it_was(start_run: StartRun, tmp_path: Path) -> None:
    async with await start_run(fake_backend(), req(tmp_path, "ok")) as run:
        events = await asyncio.wait_for(run.events.collect(), WAIT)
        completion = await asyncio.wait_for(run.completion, WAIT)
    assert completion.exit_code == 0 and completion.final_text == "FAKE-REPLY: done", events
    assert run.ended.is_set() and not run.cancel.requested
