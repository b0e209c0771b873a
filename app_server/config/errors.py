"""Config errors and warnings, worded as Codex words them."""

from __future__ import annotations

from dataclasses import dataclass

from pycodex.json_types import JsonObj

UNTRUSTED_MESSAGE = 'approval_policy = "untrusted" is no longer supported; remove this setting'
INVALID_CONFIG_SUMMARY = "Invalid configuration; using defaults."


class ConfigError(Exception):
    """A configuration the server must refuse. `str()` is the Codex-style message.

    `key` (dotted), `path`, `line`, `column` and `end_column` say where, when known; `reason` is the bare
    cause without the location prefix. `phase` is the step that failed: "read" (reading or parsing the
    file), "schema" (a bad value) or "resolve" (e.g. an unknown provider); `config/read` words each
    differently.
    """

    def __init__(
        self,
        message: str,
        *,
        key: str | None = None,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        end_column: int | None = None,
        reason: str | None = None,
        phase: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.path = path
        self.line = line
        self.column = column
        self.end_column = end_column
        self.reason = reason or message
        self.phase = phase

    def config_read_message(self) -> str:
        """What Codex's `config/read` answers (-32603) while this error stands."""
        if self.phase == "read":
            return f"failed to read configuration layers: {self.message}"
        if self.phase == "resolve":
            return f"failed to resolve feature override precedence: {self.message}"
        if self.phase == "schema" and self.key:
            return f"invalid configuration: {self.reason}\nin `{self.key}`\n"
        return f"invalid configuration: {self.message}"


@dataclass(frozen=True)
class ConfigWarning:
    """One `configWarning` notification: `to_params()` gives its params."""

    summary: str
    details: str | None = None
    path: str | None = None
    line: int | None = None
    column: int | None = None
    end_column: int | None = None

    def to_params(self) -> JsonObj:
        """The ``configWarning`` notification params (with the file position when known)."""
        params: JsonObj = {"summary": self.summary, "details": self.details}
        if self.path is not None:
            params["path"] = self.path
            if self.line is not None and self.column is not None:
                start = {"line": self.line, "column": self.column}
                end = {"line": self.line, "column": self.end_column or self.column}
                params["range"] = {"start": start, "end": end}
        return params


def invalid_config_warning(err: ConfigError) -> ConfigWarning:
    """The warning for a config.toml that cannot be used: Codex's summary, the cause as `details`."""
    return ConfigWarning(
        summary=INVALID_CONFIG_SUMMARY,
        details=err.message,
        path=err.path,
        line=err.line,
        column=err.column,
        end_column=err.end_column,
    )


def utf8_error_reason(exc: UnicodeDecodeError) -> str:
    """A UTF-8 decoding failure worded as Rust's `Utf8Error` (what Codex prints for a non-UTF-8 config)."""
    if exc.reason == "unexpected end of data":
        return f"incomplete utf-8 byte sequence from index {exc.start}"
    return f"invalid utf-8 sequence of {exc.end - exc.start} bytes from index {exc.start}"


def unknown_keys_warning(found: list[tuple[str, str]]) -> ConfigWarning:
    """`found` holds (layer label, dotted key) pairs, e.g. ("user (/h/config.toml)", "foo")."""
    count = len(found)
    noun = "setting" if count == 1 else "settings"
    lines = "".join(f"\n  {label}: `{key}` is ignored." for label, key in found)
    return ConfigWarning(
        summary=f"Codex is ignoring {count} unrecognized configuration {noun}. "
        f"Check for typos or deprecated settings.{lines}"
    )


def unimplemented_keys_warning(found: list[tuple[str, str]]) -> ConfigWarning:
    """Keys Codex knows but pycodex does not implement: said once, so none is silently ignored."""
    count = len(found)
    noun = "setting" if count == 1 else "settings"
    lines = "".join(f"\n  {label}: `{key}` has no effect in pycodex." for label, key in found)
    return ConfigWarning(summary=f"pycodex does not implement {count} configuration {noun} that Codex knows.{lines}")
