"""Config errors and warnings, worded as Codex words them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

UNTRUSTED_MESSAGE = 'approval_policy = "untrusted" is no longer supported; remove this setting'
INVALID_CONFIG_SUMMARY = "Invalid configuration; using defaults."


class ConfigError(Exception):
    """A configuration the server must refuse. `str()` is the Codex-style message.

    `key` (dotted), `path`, `line` and `column` say where, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        key: str | None = None,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.path = path
        self.line = line
        self.column = column


@dataclass(frozen=True)
class ConfigWarning:
    """One `configWarning` notification: `to_params()` gives its params."""

    summary: str
    details: str | None = None
    path: str | None = None
    line: int | None = None
    column: int | None = None
    end_column: int | None = None

    def to_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"summary": self.summary, "details": self.details}
        if self.path is not None:
            params["path"] = self.path
            if self.line is not None and self.column is not None:
                start = {"line": self.line, "column": self.column}
                end = {"line": self.line, "column": self.end_column or self.column}
                params["range"] = {"start": start, "end": end}
        return params


def unknown_keys_warning(found: list[tuple[str, str]]) -> ConfigWarning:
    """`found` holds (layer label, dotted key) pairs, e.g. ("user (/h/config.toml)", "foo")."""
    count = len(found)
    noun = "setting" if count == 1 else "settings"
    lines = "".join(f"\n  {label}: `{key}` is ignored." for label, key in found)
    return ConfigWarning(
        summary=f"Codex is ignoring {count} unrecognized configuration {noun}. "
        f"Check for typos or deprecated settings.{lines}"
    )
