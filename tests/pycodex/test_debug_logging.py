"""Logging set-up: one level variable, JSON lines that parse, library chatter only at trace, turn ids."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator

import pytest

from pycodex.log_context import bind_turn
from pycodex.logging_setup import TRACE, configure_logging, log_level


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = root.handlers[:], root.level, {n: logging.getLogger(n).level for n in ("httpx", "httpcore")}
    yield
    root.handlers[:], root.level = saved[0], saved[1]
    for name, level in saved[2].items():
        logging.getLogger(name).setLevel(level)


def test_level_variable_and_rust_log_fallback() -> None:
    assert log_level({"PYCODEX_LOG": "debug", "RUST_LOG": "error"}) == logging.DEBUG
    assert log_level({"RUST_LOG": "error"}) == logging.ERROR
    assert log_level({"PYCODEX_LOG": "trace"}) == TRACE
    assert log_level({}) == logging.WARNING


def test_json_lines_parse_whatever_the_message_holds(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging({"PYCODEX_LOG": "debug", "PYCODEX_LOG_FORMAT": "json"})
    tricky = 'quote " backslash \\ newline \n tab \t unicode é'
    logging.getLogger("pycodex.test").debug("value %r and %s", {"k": "v'"}, tricky)
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("pycodex.test").exception("failed")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["message"] == f"value {{'k': \"v'\"}} and {tricky}"
    assert first["level"] == "debug" and first["target"] == "pycodex.test" and first["thread_id"] is None
    assert "ValueError: boom" in second["exception"]


@pytest.mark.parametrize(("level", "shown"), [("debug", False), ("trace", True)])
def test_http_library_chatter_only_at_trace(capsys: pytest.CaptureFixture[str], level: str, shown: bool) -> None:
    configure_logging({"PYCODEX_LOG": level})
    logging.getLogger("httpcore.connection").debug("connect_tcp.started")
    logging.getLogger("app_server.model.client").debug("model request")
    err = capsys.readouterr().err
    assert "model request" in err
    assert ("connect_tcp.started" in err) is shown


async def test_records_inside_a_turn_task_carry_its_ids(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging({"PYCODEX_LOG": "info"})
    log = logging.getLogger("app_server.test")

    async def turn() -> None:
        bind_turn("thread-1", "turn-1")
        log.info("in the turn")
        await asyncio.to_thread(log.info, "in a worker thread of the turn")
        await asyncio.create_task(asyncio.sleep(0))

    await asyncio.create_task(turn())
    log.info("outside")
    lines = capsys.readouterr().err.splitlines()
    assert [" thread=thread-1 turn=turn-1:" in line for line in lines] == [True, True, False]
