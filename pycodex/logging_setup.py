"""stderr logging for every pycodex process: stdout is reserved for protocol lines.

One variable picks the level: ``PYCODEX_LOG`` = ``trace|debug|info|warn|error|off`` (default ``warn``);
a plain ``RUST_LOG`` level is the fallback, so Codex habits carry over. ``PYCODEX_LOG_FORMAT=json`` writes
one JSON object per line (``ts``, ``level``, ``target``, ``message``, ``thread_id``, ``turn_id`` and
``exception`` when there is one). HTTP-library chatter (httpx, httpcore, websockets) is shown only at
``trace``: at ``debug`` it would drown the product's own records.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping

from pycodex.json_types import JsonObj
from pycodex.log_context import TurnContextFilter

__all__ = ["LIBRARY_LOGGERS", "TRACE", "JsonFormatter", "TextFormatter", "configure_logging", "log_level"]

TRACE = 5
LIBRARY_LOGGERS = ("httpx", "httpcore", "websockets", "hpack", "asyncio")
_LEVELS = {"trace": TRACE, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 10}


def log_level(env: Mapping[str, str]) -> int:
    """The logging level from ``PYCODEX_LOG`` (else ``RUST_LOG``) as Codex spells levels; ``warn`` by default.
    """
    raw = env.get("PYCODEX_LOG") or env.get("RUST_LOG") or "warn"
    return _LEVELS.get(raw.strip().lower(), logging.WARNING)


class JsonFormatter(logging.Formatter):
    """One JSON object per record; ``json.dumps`` escapes whatever the message holds."""

    def format(self, record: logging.LogRecord) -> str:
        """One JSON object per record: timestamp, level, target, message and the turn's ids when set."""
        entry: JsonObj = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "target": record.name,
            "message": record.getMessage(),
            "thread_id": getattr(record, "thread_id", None),
            "turn_id": getattr(record, "turn_id", None),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """Codex-like text lines, with ``thread=`` and ``turn=`` when the record was logged inside a turn."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(ids)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """The record as a text line with its thread and turn ids appended to the logger name."""
        thread_id, turn_id = getattr(record, "thread_id", None), getattr(record, "turn_id", None)
        record.ids = "" if thread_id is None else f" thread={thread_id}" + (f" turn={turn_id}" if turn_id else "")
        return super().format(record)


def configure_logging(env: Mapping[str, str] | None = None) -> None:
    """Log to stderr at the level and in the format the environment asks for (see the module docstring)."""
    env = os.environ if env is None else env
    logging.addLevelName(TRACE, "TRACE")
    level = log_level(env)
    handler = logging.StreamHandler(sys.stderr)
    json_format = env.get("PYCODEX_LOG_FORMAT", "").strip().lower() == "json"
    handler.setFormatter(JsonFormatter() if json_format else TextFormatter())
    handler.addFilter(TurnContextFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(level if level <= TRACE else max(level, logging.WARNING))
