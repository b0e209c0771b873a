"""stderr logging for every pycodex process: stdout is reserved for protocol lines."""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["configure_logging"]

_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 10}


def configure_logging() -> None:
    """Log to stderr at the level named by ``PYCODEX_LOG`` (or a plain ``RUST_LOG`` level), default warn."""
    raw = os.environ.get("PYCODEX_LOG") or os.environ.get("RUST_LOG") or "warn"
    level = _LEVELS.get(raw.strip().lower(), logging.WARNING)
    handler = logging.StreamHandler(sys.stderr)
    if os.environ.get("LOG_FORMAT") == "json":
        fmt = '{"ts":"%(asctime)s","level":"%(levelname)s","target":"%(name)s","message":%(message)r}'
    else:
        fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    handler.setFormatter(logging.Formatter(fmt))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
