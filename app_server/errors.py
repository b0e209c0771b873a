"""The app-server's error codes: the one place every JSON-RPC error answer gets its stable `error.data`.

Integrators should not have to string-match English texts (openai/codex#28496), and the texts cannot
change anyway: they are Codex's, and clients match them today. So the texts stay, and every error answer
the app-server sends also carries a machine-readable code in ``error.data``:

* where Codex 0.169 sends data, pycodex sends exactly that shape (``{"config_write_error_code": ...}``,
  ``{"input_error_code": "input_too_large", ...}``, ``{"reason": ...}``, ``{"type": ...}``); the handler
  that raises such an error sets it, and :data:`CODEX_CODES` declares every one;
* everywhere else, ``{"appErrorCode": "<snake_case>", ...}``, the name Codex's maintainers proposed for
  exactly this: the code comes from the first rule of :data:`APP_CODES` that matches the message (with
  the ids the message names, e.g. ``threadId``), else from the JSON-RPC code (``invalid_request``...).

The handlers keep raising the plain ``RpcError`` classes with Codex's texts; :func:`error_wire`, given to
the connection's peer, is applied to every error on its way out, so no raise site can forget a code.
``docs/errors.md`` lists every code; ``tests/app_server/test_app_server_error_codes.py`` keeps it true.

    error_wire(InvalidRequest("thread not found: 019a…"))
    # {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": "019a…"},
    #  "message": "thread not found: 019a…"}
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_OVERLOADED,
    RpcError,
)

__all__ = ["APP_CODES", "APP_ERROR_CODE", "CODEX_CODES", "FALLBACK_CODES", "AppCode", "CodexCode", "classify",
           "error_wire"]

#: The `error.data` member that names pycodex's own codes.
APP_ERROR_CODE = "appErrorCode"


@dataclass(frozen=True, slots=True)
class CodexCode:
    """An `error.data` shape Codex 0.169 sends: ``data[key] == value`` identifies it."""

    key: str
    value: str
    meaning: str


@dataclass(frozen=True, slots=True)
class AppCode:
    """One of pycodex's codes: ``{"appErrorCode": name, <the named groups of the pattern that matched>}``.

    ``patterns`` match the whole message (``re.fullmatch``); their named groups become data members.
    """

    name: str
    meaning: str
    patterns: tuple[re.Pattern[str], ...] = ()


def _code(name: str, meaning: str, *patterns: str) -> AppCode:
    return AppCode(name, meaning, tuple(re.compile(p, re.DOTALL) for p in patterns))


#: Codex's own error data, sent as the handlers build it (the key first found in the data wins).
CODEX_CODES: tuple[CodexCode, ...] = (
    CodexCode("config_write_error_code", "configVersionConflict",
              "config write: `expectedVersion` is not the file's current version; read and retry"),
    CodexCode("config_write_error_code", "configLayerReadonly",
              "config write: `filePath` names a file other than the user's config.toml"),
    CodexCode("config_write_error_code", "configValidationError",
              "config write: the edit would make config.toml invalid (the message says why)"),
    CodexCode("config_write_error_code", "configPathNotFound",
              "model provider write: the provider id is not one the config defines"),
    CodexCode("input_error_code", "input_too_large",
              "turn input over the size limit (`max_chars`, `actual_chars` in the data)"),
    CodexCode("type", "modelProviderNotConfigured",
              "the thread's model provider is no longer configured (`modelProvider` in the data)"),
    CodexCode("reason", "providerUnavailable", "user verification is not available in this build or account"),
    CodexCode("reason", "invalidParams", "user verification: invalid challenge or display text"),
    CodexCode("reason", "authCommandFailed", "the provider's auth command could not obtain a token"),
    CodexCode("reason", "readStateConflict", "the thread's read state changed (`readState` in the data)"),
)

_ID = r"\S+"

#: pycodex's codes found from the message, first match wins (the most specific rules come first).
APP_CODES: tuple[AppCode, ...] = (
    _code("not_initialized", "a request before `initialize`", r"Not initialized"),
    _code("already_initialized", "a second `initialize` on the connection", r"Already initialized"),
    _code("experimental_api_required",
          "the method or field (`feature`) needs the `experimentalApi` capability at `initialize`",
          r"(?P<feature>\S+) requires experimentalApi capability"),
    _code("method_not_found", "no such method (`method`)",
          r"Invalid request: unknown variant `(?P<method>[^`]+)`, expected one of .*"),
    _code("method_not_supported", "a Codex method (`method`) pycodex does not implement",
          r"method `(?P<method>[^`]+)` is not supported by pycodex",
          r"(?P<method>\S+) is not implemented yet"),
    _code("invalid_params", "the params do not match the method (the message is serde's)",
          r"Invalid request: .*"),
    _code("config_load_failed", "config.toml (or a file it names) cannot be loaded; fix it and retry",
          r"failed to load configuration: .*"),
    _code("thread_not_found", "no thread (`threadId`) with that id is stored or loaded",
          rf"no rollout found for thread id (?P<threadId>{_ID})", rf"thread not found: (?P<threadId>{_ID})"),
    _code("thread_not_loaded", "the thread (`threadId`) is not loaded; resume it first",
          rf"thread not loaded: (?P<threadId>{_ID})"),
    _code("invalid_thread_id", "the thread id is not a UUID", r"invalid thread id: .*"),
    _code("thread_locked", "another writer (pycodex or Codex) appends to the thread (`threadId`)",
          rf"thread (?P<threadId>{_ID}) already has an active writer"),
    _code("turn_in_progress", "the thread already runs a turn; wait for it to end or interrupt it",
          rf"thread (?P<threadId>{_ID}) already has an active turn", r"thread has an active turn",
          rf"cannot delete thread (?P<threadId>{_ID}) while a turn is running"),
    _code("no_active_turn", "the thread runs no turn to steer or interrupt", r"no active turn to (?:steer|interrupt)"),
    _code("turn_id_mismatch", "`expectedTurnId` is not the active turn (`activeTurnId`)",
          r"expected active turn id `(?P<expectedTurnId>[^`]*)` but found `(?P<activeTurnId>[^`]*)`"),
    _code("turn_not_found", "no turn (`turnId`) with that id in the thread", rf"turn not found: (?P<turnId>{_ID})"),
    _code("thread_already_archived", "the thread (`threadId`) is archived already",
          rf"thread is already archived: (?P<threadId>{_ID})"),
    _code("thread_not_archived", "the thread (`threadId`) is not archived", rf"thread is not archived: (?P<threadId>{_ID})"),
    _code("invalid_cursor", "a list cursor this server did not hand out", r"invalid cursor: .*", r"cursor \d+ exceeds .*"),
    _code("duplicate_request_id", "a request id that is still in flight on the connection", r"duplicate request id .*"),
    _code("process_not_found", "no running command/exec or process with that id",
          r"no active (?:command/exec|process) for process (?:id|handle) .*"),
    _code("duplicate_process_id", "a process id or handle already in use",
          r"duplicate active (?:command/exec process id|process handle): .*"),
    _code("not_supported", "a feature this pycodex build does not offer (the message says which)",
          r".*\bpycodex (?:cannot|has no)\b.*", r".* is not available in pycodex\b.*"),
)

#: The code of an error no rule names, by its JSON-RPC code; any other JSON-RPC code gets `error`.
FALLBACK_CODES: dict[int, AppCode] = {
    INVALID_REQUEST: AppCode("invalid_request", "a request refused for a reason with no code of its own"),
    INVALID_PARAMS: AppCode("invalid_params", "the params do not match the method (the message is serde's)"),
    METHOD_NOT_FOUND: AppCode("method_not_found", "no such method (`method`)"),
    INTERNAL_ERROR: AppCode("internal_error", "a failure on pycodex's side (a file it could not read, a bug)"),
    SERVER_OVERLOADED: AppCode("server_overloaded", "the connection's request queue is full; retry later"),
}
OTHER_CODE = AppCode("error", "an error relayed with a JSON-RPC code of its own (an MCP server's)")


def _codex_code(data: JsonObj) -> CodexCode | None:
    for code in CODEX_CODES:
        if data.get(code.key) == code.value:
            return code
    return None


def classify(error: RpcError) -> JsonObj:
    """The `error.data` ``error`` is sent with: Codex's own data as is, else pycodex's code."""
    data = error.data
    if isinstance(data, dict) and _codex_code(data) is not None:
        return data
    found: JsonObj = {}
    for code in APP_CODES:
        for pattern in code.patterns:
            match = pattern.fullmatch(error.message)
            if match is not None:
                found = {APP_ERROR_CODE: code.name, **{k: v for k, v in match.groupdict().items() if v is not None}}
                break
        if found:
            break
    if not found:
        found = {APP_ERROR_CODE: FALLBACK_CODES.get(error.wire_code, OTHER_CODE).name}
    # Data a handler set that is not Codex's shape is kept; the code is added to it.
    return {**found, **data} if isinstance(data, dict) else found


def error_wire(error: RpcError) -> JsonObj:
    """The JSON-RPC error object for ``error``, its `data` always holding a code (Codex's member order)."""
    return {"code": error.wire_code, "data": classify(error), "message": error.message}
