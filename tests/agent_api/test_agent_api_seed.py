"""The five seed-000 tests (completion classification race), ported from the Rust wrapper.

Contract (agent_wrapper.md §6): bounded hand-offs; completion never resolves before every buffered line is
classified; dropping the events switches to drain-and-classify without killing the child; a classified
failure is exactly one terminal Error event equal to the completion's Backend message, after the
session-handle Status; transport errors in resume flows are swallowed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import pytest

from agent_api import BackendError, EventKind, ExecBackend, RunHandle, RunRequest, SessionSelector
from agent_api.pinned import ADD_DIRS_RUNTIME_REJECTION, selection_failure_message
from agent_api.values import CAP_SESSION_HANDLE, EXT_ADD_DIRS, EXT_RESUME
from tests.support.agent_api_runs import assert_no_leak, fake_backend, start_run

__all__ = ["start_run"]

BUFFERED_COMPLETION_TIMEOUT = 5.0
BACKPRESSURE_ASSERT_TIMEOUT = 0.2
POST_DROP_PENDING_TIMEOUT = 0.05
DRAIN_BOUND = 60.0

StartRun = Callable[[ExecBackend, RunRequest], Awaitable[RunHandle]]

BUFFERED_ENV = {"FAKE_CODEX_BUFFERED_EVENT_COUNT": "1024", "FAKE_CODEX_BUFFERED_EVENT_PADDING_BYTES": "1024"}
# As at the seed's HEAD (b3a25d7a): the fake paces itself so that draining takes measurably long.
SLOW_DRAIN_ENV = {
    "FAKE_CODEX_BUFFERED_EVENT_COUNT": "4096",
    "FAKE_CODEX_BUFFERED_EVENT_PADDING_BYTES": "2048",
    "FAKE_CODEX_BUFFERED_EVENT_SLEEP_EVERY": "8",
    "FAKE_CODEX_BUFFERED_EVENT_SLEEP_MILLIS": "1",
}


def add_dirs_fixture(tmp_path: Path) -> list[Path]:
    dirs = [tmp_path / "alpha", tmp_path / "beta"]
    for directory in dirs:
        directory.mkdir()
    return dirs


def add_dir_env(dirs: list[Path]) -> dict[str, str]:
    env = {"FAKE_CODEX_EXPECT_ADD_DIR_COUNT": str(len(dirs))}
    env.update({f"FAKE_CODEX_EXPECT_ADD_DIR_{i}": str(d) for i, d in enumerate(dirs)})
    return env


def request(
    run_start: Path, scenario: str, selector: SessionSelector, env: dict[str, str], add_dirs: list[Path] | None
) -> RunRequest:
    extensions: dict[str, object] = {EXT_RESUME: selector.to_extension()}
    if add_dirs:
        extensions[EXT_ADD_DIRS] = {"dirs": [str(d) for d in add_dirs]}
    return RunRequest(
        prompt="hello world",
        working_dir=run_start,
        env={"FAKE_CODEX_SCENARIO": scenario, "FAKE_CODEX_EXPECT_PROMPT": "hello world", **env},
        extensions=extensions,
    )


async def assert_pending(completion: asyncio.Future[object], seconds: float, why: str) -> None:
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(completion), seconds)
    assert not completion.done(), why


async def expect_backend_error(handle: RunHandle) -> str:
    with pytest.raises(BackendError) as caught:
        await asyncio.wait_for(handle.completion, BUFFERED_COMPLETION_TIMEOUT)
    return caught.value.message


async def assert_buffered_add_dirs_runtime_rejection(
    start_run: StartRun, tmp_path: Path, scenario: str, selector: SessionSelector, extra_env: dict[str, str]
) -> None:
    run_start = tmp_path / "run_start"
    run_start.mkdir()
    dirs = add_dirs_fixture(tmp_path)
    handle = await start_run(
        fake_backend(), request(run_start, scenario, selector, {**add_dir_env(dirs), **BUFFERED_ENV, **extra_env}, dirs)
    )
    await assert_pending(handle.completion, BACKPRESSURE_ASSERT_TIMEOUT,
                         "completion should remain pending while buffered events are not drained")
    events = await asyncio.wait_for(handle.events.collect(), DRAIN_BOUND)
    message = await expect_backend_error(handle)
    assert message == ADD_DIRS_RUNTIME_REJECTION
    handle_idx = next(i for i, e in enumerate(events)
                      if e.kind is EventKind.STATUS and isinstance(e.data, dict) and e.data.get("schema") == CAP_SESSION_HANDLE)
    error_idx = next(i for i, e in enumerate(events) if e.kind is EventKind.ERROR)
    assert handle_idx < error_idx
    assert events[error_idx].message == ADD_DIRS_RUNTIME_REJECTION
    assert events[-1].kind is EventKind.ERROR
    assert_no_leak(events, message, str(handle.completion.exception()))


async def assert_buffered_selection_failure(
    start_run: StartRun, tmp_path: Path, scenario: str, selector: SessionSelector, extra_env: dict[str, str]
) -> None:
    expected = selection_failure_message(selector)
    handle = await start_run(fake_backend(), request(tmp_path, scenario, selector, {**BUFFERED_ENV, **extra_env}, None))
    events = await asyncio.wait_for(handle.events.collect(), DRAIN_BOUND)
    message = await expect_backend_error(handle)
    assert message == expected
    assert [e.message for e in events if e.kind is EventKind.ERROR] == [expected]
    assert events[-1].kind is EventKind.ERROR
    assert_no_leak(events, message)


async def assert_dropping_events_waits_for_add_dirs_classification(
    start_run: StartRun, tmp_path: Path, scenario: str, selector: SessionSelector, extra_env: Iterable[tuple[str, str]]
) -> None:
    run_start = tmp_path / "run_start"
    run_start.mkdir()
    dirs = add_dirs_fixture(tmp_path)
    env = {**add_dir_env(dirs), **SLOW_DRAIN_ENV, **dict(extra_env)}
    handle = await start_run(fake_backend(), request(run_start, scenario, selector, env, dirs))
    completion = handle.completion
    first = await asyncio.wait_for(anext(handle.events), BUFFERED_COMPLETION_TIMEOUT)
    assert first is not None
    await assert_pending(completion, BACKPRESSURE_ASSERT_TIMEOUT,
                         "completion should remain pending while buffered events are still attached")
    # Python's "drop": close the stream (letting it be garbage collected does the same, tested elsewhere).
    await handle.events.aclose()
    await assert_pending(completion, POST_DROP_PENDING_TIMEOUT,
                         "completion should remain pending until the buffered suppressed errors are drained")
    message = await expect_backend_error(handle)
    assert message == ADD_DIRS_RUNTIME_REJECTION


async def test_buffered_resume_last_add_dirs_runtime_rejection_stays_pinned_before_events_are_drained(
    start_run: StartRun, tmp_path: Path
) -> None:
    await assert_buffered_add_dirs_runtime_rejection(
        start_run, tmp_path, "add_dirs_runtime_rejection_resume_last_buffered_tail", SessionSelector(), {}
    )


async def test_buffered_resume_id_add_dirs_runtime_rejection_stays_pinned_before_events_are_drained(
    start_run: StartRun, tmp_path: Path
) -> None:
    resume_id = "thread-123"
    await assert_buffered_add_dirs_runtime_rejection(
        start_run, tmp_path, "add_dirs_runtime_rejection_resume_id_buffered_tail", SessionSelector(resume_id),
        {"FAKE_CODEX_EXPECT_RESUME_ID": resume_id},
    )


async def test_buffered_resume_last_selection_failure_stays_pinned_before_events_are_drained(
    start_run: StartRun, tmp_path: Path
) -> None:
    await assert_buffered_selection_failure(
        start_run, tmp_path, "resume_last_not_found_buffered_transport_errors", SessionSelector(), {}
    )


async def test_buffered_resume_id_selection_failure_stays_pinned_before_events_are_drained(
    start_run: StartRun, tmp_path: Path
) -> None:
    resume_id = "thread-123"
    await assert_buffered_selection_failure(
        start_run, tmp_path, "resume_id_not_found_buffered_transport_errors", SessionSelector(resume_id),
        {"FAKE_CODEX_EXPECT_RESUME_ID": resume_id},
    )


async def test_dropping_events_does_not_bypass_buffered_resume_add_dirs_classification(
    start_run: StartRun, tmp_path: Path
) -> None:
    await assert_dropping_events_waits_for_add_dirs_classification(
        start_run, tmp_path, "add_dirs_runtime_rejection_resume_last_buffered_tail", SessionSelector(), ()
    )
