"""The stable client methods of the Codex 0.169 schema and minimal valid params for the ones the surface
table (surface_requests.py) and the thread-family table (tests/app_server/threads/test_thread_family_diff.py) leave out; sent
to both servers by tests/app_server/test_stable_methods_diff.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .schema import SchemaValidator, snapshot_bundle

Ctx = dict[str, Any]
Params = Callable[[Ctx], Any]
NIL = "00000000-0000-7000-8000-000000000000"


def stable_methods() -> list[str]:
    """Every ClientRequest method of the recorded stable schema, in schema order."""
    return list(SchemaValidator(snapshot_bundle("stable"), source="tests/data stable snapshot").request_params)


#: Methods where Codex needs the network (there is none in tests): both must fail with the same code and a
#: message that starts alike; the rest is the transport's reason (Codex: a DNS failure; pycodex: no endpoint).
OFFLINE_ERRORS = {"feedback/upload": "failed to upload feedback: "}


def failed_alike_offline(method: str, codex: dict[str, Any], ours: dict[str, Any]) -> bool:
    """Both answers are the same offline failure of a method listed in OFFLINE_ERRORS."""
    prefix = OFFLINE_ERRORS.get(method)
    a, b = codex.get("error"), ours.get("error")
    return (prefix is not None and a is not None and b is not None and a.get("code") == b.get("code")
            and str(a.get("message", "")).startswith(prefix) and str(b.get("message", "")).startswith(prefix))


def _t(**extra: Any) -> Params:
    return lambda c: {"threadId": c["tid"], **extra}


def _turns(**extra: Any) -> Params:
    """Params on the thread kept for turn-starting calls, so their effects stay off the thread the
    thread-family calls use."""
    return lambda c: {"threadId": c["turns_tid"], **extra}


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


#: Methods whose success starts a turn on the thread: the caller waits for its turn/completed before going on.
TURN_STARTING = frozenset({"turn/start", "review/start", "thread/compact/start", "thread/shellCommand"})

# (method, params). `tid` and `turns_tid` are threads with one finished turn each; the turn calls use the second,
# where `last` is the last turn started; `ws` is the workspace. Read-only calls first, then the turn-starting
# ones, then the writes to config.
STABLE_EXTRA: list[tuple[str, Params]] = [
    ("config/read", lambda c: {"cwd": c["ws"]}),
    ("configRequirements/read", lambda c: None),
    ("model/list", lambda c: {}),
    ("modelProvider/list", lambda c: {}),
    ("modelProvider/capabilities/read", lambda c: {}),
    ("skills/list", lambda c: {"cwds": [c["ws"]]}),
    ("mcpServerStatus/list", lambda c: {}),
    ("config/mcpServer/reload", lambda c: None),
    ("mcpServer/resource/read", lambda c: {"server": "nosuch", "uri": "file:///x", "threadId": c["tid"]}),
    ("mcpServer/tool/call", _t(server="nosuch", tool="t")),
    ("mcpServer/oauth/login", lambda c: {"name": "nosuch"}),
    ("fuzzyFileSearch", lambda c: {"query": "note", "roots": [c["ws"]]}),
    ("feedback/upload", lambda c: {"classification": "bug", "includeLogs": False}),
    ("turn/start", _turns(input=_text("again"))),
    ("turn/steer", lambda c: {"threadId": c["turns_tid"], "expectedTurnId": c["last"], "input": _text("steer")}),
    ("turn/interrupt", lambda c: {"threadId": c["turns_tid"], "turnId": c["last"]}),
    ("thread/shellCommand", _turns(command="echo hi")),
    ("thread/compact/start", _turns()),
    ("review/start", _turns(target={"type": "custom", "instructions": "review the notes"})),
    ("thread/revert", lambda c: {"threadId": c["turns_tid"], "beforeTurnId": c["second"]}),
    ("config/value/write", lambda c: {"keyPath": "model_verbosity", "value": "low", "mergeStrategy": "replace"}),
    ("config/batchWrite", lambda c: {"edits": [{"keyPath": "model_verbosity", "value": "medium",
                                                "mergeStrategy": "replace"}]}),
    ("modelProvider/config/write", lambda c: {"settings": {"type": "customGateway", "name": "My GW",
                                                           "baseUrl": "http://127.0.0.1:9/v1", "envKey": "GW_KEY"}}),
]
