"""Comparing pycodex's error answers with Codex 0.169's, which carry no code where pycodex adds one."""

from __future__ import annotations

from typing import Any

__all__ = ["as_codex"]


def as_codex(error: dict[str, Any]) -> dict[str, Any]:
    """``error`` as Codex 0.169 sends it: without the ``{"appErrorCode": ...}`` data pycodex adds where Codex
    sends none (docs/errors.md); Codex's own data, and everything else, kept."""
    data = error.get("data")
    if isinstance(data, dict) and "appErrorCode" in data:
        return {key: value for key, value in error.items() if key != "data"}
    return error
