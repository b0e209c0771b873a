"""stderr logging for every pycodex process: stdout is reserved for protocol lines."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

__all__ = ["LOG_FORMAT", "configure_logging", "log_level"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 10}


def log_level(env: Mapping[str, str]) -> int:
    """The level named by ``PYCODEX_LOG`` (or a plain ``RUST_LOG`` level), default warn."""
    raw = env.get("PYCODEX_LOG") or env.get("RUST_LOG") or "warn"
    return _LEVELS.get(raw.strip().lower(), logging.WARNING)


def configure_logging() -> None:
    """Log to stderr at the level `log_level` reads from the environment."""
    level = log_level(os.environ)
    handler = logging.StreamHandler(sys.stderr)
    if os.environ.get("LOG_FORMAT") == "json":
        fmt = '{"ts":"%(asctime)s","level":"%(levelname)s","target":"%(name)s","message":%(message)r}'
    else:
        fmt = LOG_FORMAT
    handler.setFormatter(logging.Formatter(fmt))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
