"""The first divergence of a failed pair, found in its folder's transcripts, as one line for the table.

A scenario that knows what its command must do writes ``expected.json`` (:class:`Expected`) into the pair's
folder; :func:`first_divergence` then reads the folder alone and names the earliest thing that went wrong,
upstream first: the Noise handshake, then a Noise transport failure (``relay-frames.txt`` and the stderr
logs, read by support/relay_capture.py), the exec-server's answers
(``exec-server.jsonrpc.jsonl``: an error answer, a missing field, the command's exit code and output),
the app-server's (``app-server.jsonrpc.jsonl``: an error answer, a commandExecution item's fields, exit
code and output), then what the model was told (``model-requests.jsonl``: the ``function_call_output``).
``None`` means the transcripts show nothing wrong, and the scenario's own symptom stands.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from compat_tests.support.relay_capture import handshake_divergence, stream_divergence

__all__ = [
    "EXPECTED_FILE",
    "Expected",
    "app_divergence",
    "exec_divergence",
    "first_divergence",
    "missing_field",
    "model_divergence",
]

EXPECTED_FILE = "expected.json"
Json = Any
Record = dict[str, Any]  # one transcript line: {"dir": ">" | "<", "t": seconds, "msg": message}

#: Fields every build must put on a completed commandExecution item (Codex 0.169.0's ThreadItem).
COMMAND_ITEM_FIELDS = ("id", "command", "cwd", "status", "aggregatedOutput", "exitCode")
#: What Codex 0.169.0's exec-server client requires of each message the exec-server sends.
EXEC_NOTIFICATION_FIELDS = {
    "process/output": ("processId", "seq", "stream", "chunk"),
    "process/exited": ("processId", "seq", "exitCode"),
    "process/closed": ("processId", "seq"),
}
EXEC_RESULT_FIELDS = {
    "initialize": ("sessionId",),
    "process/start": ("processId",),
    "process/read": ("chunks", "nextSeq", "exited", "exitCode", "closed"),
}
#: An fs/* probe of a path that does not exist answers this; Codex's skill discovery makes dozens.
NOT_FOUND = -32004
_EXIT_LINE = re.compile(r"Process exited with code (-?\d+)")
_SHOWN = 160


@dataclass(frozen=True)
class Expected:
    """What the scenario's one command must do, written next to the transcripts as ``expected.json``."""

    #: The model's function call id (Codex and pycodex give the commandExecution item the same id).
    call_id: str
    #: A piece of the command line that only the scenario's command contains (to find its process).
    command_marker: str
    exit_code: int
    #: Text the command prints: it must be in aggregatedOutput and in the function_call_output.
    output: str

    def write(self, folder: Path) -> None:
        (folder / EXPECTED_FILE).write_text(json.dumps(asdict(self)) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, folder: Path) -> Expected | None:
        path = folder / EXPECTED_FILE
        return cls(**json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None


def _short(value: Json) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def missing_field(where: str, obj: Json, fields: Iterable[str]) -> str | None:
    """``WHERE.FIELD missing`` for the first of ``fields`` not in ``obj``, naming a near-identical sibling
    key as the likely rename (``item/completed params.item.exitCode missing (got exitCodeRenamed?)``)."""
    if not isinstance(obj, dict):
        return f"{where} is {_short(obj)}, not an object"
    for field in fields:
        if field in obj:
            continue
        others = [key for key in obj if key not in fields]
        close = difflib.get_close_matches(field, others, n=1, cutoff=0.6)
        close = close or [key for key in others if field.lower() in key.lower()][:1]
        return f"{where}.{field} missing" + (f" (got {close[0]}?)" if close else "")
    return None


def _messages(records: Sequence[Record]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(direction, message, method) in transcript order; ``method`` is the message's own or, for an
    answer, that of the request it answers (``""`` when unknown)."""
    asked: dict[tuple[str, str], str] = {}
    for record in records:
        msg, direction = record.get("msg"), str(record.get("dir", ""))
        if not isinstance(msg, dict):
            continue
        key = json.dumps(msg.get("id"))
        if isinstance(msg.get("method"), str):
            if "id" in msg:
                asked[(direction, key)] = msg["method"]
            yield direction, msg, msg["method"]
        else:
            yield direction, msg, asked.get((">" if direction == "<" else "<", key), "")


def _error_text(method: str, error: Json) -> str:
    method = method or "a request"
    if isinstance(error, dict):
        return f"{method} answered error {error.get('code')}: {_short(error.get('message', ''))}"
    return f"{method} answered error {_short(error)}"


def _decoded(chunk: Json) -> str:
    try:
        return base64.b64decode(str(chunk), validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return ""


def _exec_message(msg: dict[str, Any], method: str) -> str | None:
    """What is wrong with one message the exec-server sent, on its own: an error answer, a missing field."""
    if "error" in msg and "method" not in msg:
        error = msg["error"]
        probe = method.startswith("fs/") and isinstance(error, dict) and error.get("code") == NOT_FOUND
        return None if probe else _error_text(method, error)
    if "method" in msg and method in EXEC_NOTIFICATION_FIELDS:
        return missing_field(f"{method} params", msg.get("params"), EXEC_NOTIFICATION_FIELDS[method])
    if "result" in msg and method in EXEC_RESULT_FIELDS:
        return missing_field(f"{method} result", msg["result"], EXEC_RESULT_FIELDS[method])
    return None


def exec_divergence(records: Sequence[Record], expected: Expected | None) -> str | None:
    """The first wrong message the exec-server sent (``exec-server.jsonrpc.jsonl`` of the WebSocket tap):
    an error answer (but an fs/* probe's not-found), a missing field, the command's exit code or output."""
    process = ""
    output: list[str] = []
    for direction, msg, method in _messages(records):
        params: dict[str, Any] = msg["params"] if isinstance(msg.get("params"), dict) else {}
        if direction == ">":
            argv = " ".join(str(a) for a in params.get("argv", []))
            if method == "process/start" and expected and expected.command_marker in argv:
                process = str(params.get("processId", ""))
            continue
        wrong = _exec_message(msg, method)
        if wrong:
            return f"exec-server {wrong}"
        if not expected or not process or params.get("processId") != process:
            continue
        if method == "process/output":
            output.append(_decoded(params.get("chunk")))
        elif method == "process/exited" and params.get("exitCode") != expected.exit_code:
            code = params.get("exitCode")
            return f"exec-server process/exited params.exitCode: expected {expected.exit_code}, got {code}"
        elif method == "process/closed" and output and expected.output not in "".join(output):
            # Only once closed is all output delivered; a client reading by process/read leaves none here.
            return (
                f"exec-server process/output of the command: expected {expected.output!r} in it, "
                f"got {_short(''.join(output))!r}"
            )
    return None


def _command_item(item: dict[str, Any], expected: Expected | None) -> str | None:
    """What is wrong with a completed commandExecution item: a missing field, then (for the scenario's
    command) its exit code, then its output."""
    gap = missing_field("item/completed params.item", item, COMMAND_ITEM_FIELDS)
    if gap or not expected or item.get("id") != expected.call_id:
        return gap
    output = str(item.get("aggregatedOutput") or "")
    if item.get("exitCode") != expected.exit_code:
        tail = _last_line(output)
        told = f"; output ends: {_short(tail)}" if tail and tail != expected.output else ""
        return f"commandExecution exitCode: expected {expected.exit_code}, got {item.get('exitCode')}{told}"
    if expected.output not in output:
        return (
            f"commandExecution aggregatedOutput: expected {expected.output!r} in it, got {_short(output)!r}"
        )
    return None


def app_divergence(records: Sequence[Record], expected: Expected | None) -> str | None:
    """The first wrong answer or item of the app-server (``app-server.jsonrpc.jsonl``), in order: an error
    answer, a completed commandExecution item's fields and values, a command item the turn left open."""
    started: set[str] = set()
    for direction, msg, method in _messages(records):
        if direction != "<":
            continue
        if "error" in msg and "method" not in msg:
            return _error_text(method, msg["error"])
        params = msg.get("params")
        item = params.get("item") if isinstance(params, dict) else None
        if not isinstance(item, dict) or item.get("type") != "commandExecution":
            if method == "turn/completed" and expected and expected.call_id in started:
                return f"commandExecution {expected.call_id}: item/started but no item/completed before turn/completed"
            continue
        if method == "item/started":
            started.add(str(item.get("id")))
        elif method == "item/completed":
            started.discard(str(item.get("id")))
            wrong = _command_item(item, expected)
            if wrong:
                return wrong
    return None


def model_divergence(requests: Sequence[Json], expected: Expected) -> str | None:
    """Whether the model got the command's output and exit code back (``model-requests.jsonl``)."""
    outputs = [
        item.get("output")
        for request in requests
        if isinstance(request, dict) and str(request.get("path", "")).endswith("/responses")
        for item in request.get("body", {}).get("input", [])
        if isinstance(item, dict)
        and item.get("type") == "function_call_output"
        and item.get("call_id") == expected.call_id
    ]
    if not outputs:
        return f"the model never received a function_call_output for {expected.call_id}"
    text = outputs[-1] if isinstance(outputs[-1], str) else json.dumps(outputs[-1])
    code = _EXIT_LINE.search(text)
    if code and int(code.group(1)) != expected.exit_code:
        return f"function_call_output exit code: expected {expected.exit_code}, got {code.group(1)}"
    if not code and "Process running" in text:
        return f"function_call_output of {expected.call_id}: the process never exited: {_short(text)!r}"
    if expected.output not in text:
        return f"function_call_output of {expected.call_id}: expected {expected.output!r} in it, got {_short(text)!r}"
    return None


def _records(path: Path) -> list[Record]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def first_divergence(folder: Path) -> str | None:
    """The earliest divergence the pair's artifacts show, upstream first; None when they show none."""
    expected = Expected.read(folder)
    # The executor's log is named for the process; causes name it by its role.
    logs = {"exec-server": folder / "executor.stderr.log", "app-server": folder / "app-server.stderr.log"}
    stderr = {name: _read(path) for name, path in logs.items() if path.is_file()}
    frames = _read(folder / "relay-frames.txt")
    found = handshake_divergence(frames, stderr) or stream_divergence(frames, stderr)
    found = found or exec_divergence(_records(folder / "exec-server.jsonrpc.jsonl"), expected)
    found = found or app_divergence(_records(folder / "app-server.jsonrpc.jsonl"), expected)
    if found or expected is None or not (folder / "model-requests.jsonl").is_file():
        return found
    return model_divergence(_records(folder / "model-requests.jsonl"), expected)
