"""Shared pieces of the agent_api tests: the fake backend, and a fixture that tears runs down."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from agent_api import (
    BackendConfig,
    BackendError,
    CodexBackend,
    ExecBackend,
    PycodexBackend,
    RunHandle,
    RunRequest,
)

FAKE_BACKEND = Path(__file__).resolve().parent / "fake_agent_backend.py"
LEAK_SENTINELS = (
    "ADD_DIR_RAW_PATH_SECRET",
    "ADD_DIR_STDOUT_SECRET",
    "ADD_DIR_STDERR_SECRET",
    "RAW-LINE-SECRET-PARSE",
    "RAW-STDERR-SECRET",
    "STDOUT-SENTINEL-DO-NOT-LEAK",
    "MODEL-SECRET",
)
TEARDOWN = 15.0


def fake_backend(kind: str = "codex", **config: object) -> ExecBackend:
    """A backend whose binary is the fake agent (``python fake_agent_backend.py``)."""
    cls = CodexBackend if kind == "codex" else PycodexBackend
    return cls(BackendConfig(binary=[sys.executable, str(FAKE_BACKEND)], **config))  # type: ignore[arg-type]


def assert_no_leak(*texts: object) -> None:
    for text in texts:
        for sentinel in LEAK_SENTINELS:
            assert sentinel not in repr(text), f"{sentinel} leaked"


@pytest.fixture
async def start_run() -> AsyncIterator[Callable[[ExecBackend, RunRequest], Awaitable[RunHandle]]]:
    """``handle = await start_run(backend, request)``; at teardown every run is cancelled (killing its
    process group if it still runs) and its completion awaited, bounded."""
    handles: list[RunHandle] = []

    async def start(backend: ExecBackend, request: RunRequest) -> RunHandle:
        handle = await backend.run(request)
        handles.append(handle)
        return handle

    yield start
    for handle in handles:
        handle.cancel.cancel()
        handle.events.close()
        await asyncio.wait_for(handle.ended.wait(), TEARDOWN)  # the child is reaped
        if not handle.completion.cancelled():  # a test that gave up on it has nothing to retrieve
            with contextlib.suppress(BackendError):
                await handle.completion
