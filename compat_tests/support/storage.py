"""The storage scenario's checks: what one build's thread/read and thread/list answers must keep when another
build reads the same CODEX_HOME, and what the model must be sent when a resumed thread goes on.

Pure functions over decoded JSON (unit tests in test_storage_checks.py), plus :class:`StorageRpc`, the client
that names the build, the method, the thread and the server's error code and message in every failure.
Each check returns a list of problems (empty: it holds); the first is the cause the compat table shows.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from compat_tests.support.rpc import AppServerRpc, ScenarioError

#: Decoded JSON, spelled here rather than imported: the harness never imports the product.
JsonValue: TypeAlias = Any
JsonObj: TypeAlias = dict[str, Any]

__all__ = [
    "ITEM_FIELDS",
    "StorageRpc",
    "compare_listing",
    "compare_thread",
    "compare_turns",
    "error_cause",
    "history_problems",
    "item_key",
    "message_texts",
    "requests_with_user_text",
    "split_acknowledged",
    "stderr_hint",
]

#: Per item type, the fields (besides ``id`` and ``type``) a reader must give back as the writer stored them.
#: Timings, process ids and display-only fields are left out: they may be re-derived on every read.
ITEM_FIELDS: dict[str, tuple[str, ...]] = {
    "userMessage": ("content",),
    "agentMessage": ("text",),
    "commandExecution": ("command", "status", "exitCode", "aggregatedOutput"),
    "fileChange": ("changes", "status"),
    "contextCompaction": (),
    "reasoning": ("summary",),
}
_SHOWN = 80  # characters of a value quoted in a problem


def _short(value: JsonValue) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 3]}..."


def _user_content(value: JsonValue) -> JsonValue:
    # The text of each part: readers may add empty `text_elements` or spell a part's extras differently.
    if not isinstance(value, list):
        return value
    return [part.get("text", part) if isinstance(part, dict) else part for part in value]


def item_key(item: JsonObj) -> JsonObj:
    """The part of a thread item that must survive a round trip: id, type and the type's key fields."""
    kind = str(item.get("type"))
    key: JsonObj = {"id": item.get("id"), "type": kind}
    for field in ITEM_FIELDS.get(kind, ()):
        value = item.get(field)
        key[field] = _user_content(value) if kind == "userMessage" else value
    return key


def _label(item: JsonObj) -> str:
    return f"{item.get('type')} {item.get('id')}"


def _compare_items(expected: list[JsonObj], actual: list[JsonObj], where: str) -> list[str]:
    """Items matched by (type, id): missing ones, extra ones, changed fields, then order."""
    problems: list[str] = []
    remaining = [item_key(item) for item in actual]
    matched: list[int] = []
    for index, want in enumerate(item_key(item) for item in expected):
        found = next(
            (i for i, got in enumerate(remaining) if (got["type"], got["id"]) == (want["type"], want["id"])),
            None,
        )
        if found is None:
            problems.append(f"{where}: item {index + 1} ({_label(want)}) missing")
            continue
        matched.append(found)
        got = remaining[found]
        for field, value in want.items():
            if got.get(field) != value:
                problems.append(
                    f"{where}: {_label(want)} field {field} is {_short(got.get(field))}, writer had {_short(value)}"
                )
    extra = [got for i, got in enumerate(remaining) if i not in matched]
    problems += [f"{where}: extra item {_label(got)}" for got in extra]
    if matched != sorted(matched):
        problems.append(f"{where}: items out of order ({', '.join(_label(remaining[i]) for i in matched)})")
    return problems


def _items(turn: JsonObj) -> list[JsonObj]:
    items = turn.get("items")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def compare_turns(expected: Sequence[JsonObj], actual: Sequence[JsonObj], where: str) -> list[str]:
    """Turns compared by position: count, id, status, then their items."""
    if len(actual) != len(expected):
        have = ", ".join(str(len(_items(t))) for t in actual) or "none"
        return [f"{where}: {len(actual)} turns (items: {have}), writer had {len(expected)}"]
    problems: list[str] = []
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        at = f"{where} turn {index + 1}"
        if got.get("id") != want.get("id"):
            problems.append(f"{at}: id {_short(got.get('id'))}, writer had {_short(want.get('id'))}")
        if got.get("status") != want.get("status"):
            problems.append(
                f"{at}: status {_short(got.get('status'))}, writer had {_short(want.get('status'))}"
            )
        problems += _compare_items(_items(want), _items(got), at)
    return problems


def _turns(thread: JsonObj) -> list[JsonObj]:
    turns = thread.get("turns")
    return [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []


def compare_thread(expected: JsonObj, actual: JsonObj, where: str) -> list[str]:
    """A reader's ``thread`` (thread/read includeTurns) against the writer's: id, preview, name, turns."""
    problems = [
        f"{where}: {field} {_short(actual.get(field))}, writer had {_short(expected.get(field))}"
        for field in ("id", "preview", "name")
        if actual.get(field) != expected.get(field)
    ]
    return problems + compare_turns(_turns(expected), _turns(actual), where)


def compare_listing(expected: Iterable[JsonObj], actual: Iterable[JsonObj], reader: str) -> list[str]:
    """Every thread the writer listed is in the reader's thread/list ``data``, with the same preview and name."""
    listed = {str(entry.get("id")): entry for entry in actual}
    problems: list[str] = []
    for want in expected:
        got = listed.get(str(want.get("id")))
        if got is None:
            have = ", ".join(sorted(listed)) or "nothing"
            problems.append(f"{reader} thread/list misses thread {want.get('id')} (it listed {have})")
            continue
        for field in ("preview", "name"):
            if got.get(field) != want.get(field):
                problems.append(
                    f"{reader} thread/list thread {want.get('id')}: {field} {_short(got.get(field))}, "
                    f"writer had {_short(want.get(field))}"
                )
    return problems


def message_texts(body: JsonValue) -> list[tuple[str, str]]:
    """``(role or item type, text)`` of every input item of a Responses request body, in order."""
    items = body.get("input") if isinstance(body, dict) else None
    out: list[tuple[str, str]] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type", "message") == "message":
            content = item.get("content")
            parts = content if isinstance(content, list) else [{"text": content}]
            text = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
            out.append((str(item.get("role")), text))
        else:
            out.append((str(item.get("type")), json.dumps(item.get("output", item.get("arguments", "")))))
    return out


def requests_with_user_text(records: Iterable[JsonObj], text: str) -> list[JsonObj]:
    """The logged model requests (fake model ``--log`` lines) whose user messages contain ``text``."""
    return [
        record
        for record in records
        if str(record.get("path", "")).endswith("/responses")
        and any(role == "user" and text in said for role, said in message_texts(record.get("body")))
    ]


def history_problems(body: JsonValue, expected: Iterable[tuple[str, str]], where: str) -> list[str]:
    """The ``(role or item type, text)`` pairs of ``expected`` that no input item of ``body`` carries."""
    said = message_texts(body)
    return [
        f"{where}: no {role} input with {_short(text)} (the request had {len(said)} input items)"
        for role, text in expected
        if not any(r == role and text in t for r, t in said)
    ]


def split_acknowledged(
    problems: Iterable[str], ids: Mapping[str, str], accepted: Iterable[str]
) -> tuple[list[str], list[str]]:
    """``(problems not accepted, accepted lines that occurred)``; a problem is matched with each thread id
    written as ``<role>`` (``ids``: role -> thread id), so reviewed lines do not depend on generated ids."""
    wanted = set(accepted)
    remaining: list[str] = []
    occurred: list[str] = []
    for problem in problems:
        named = problem
        for role, thread_id in ids.items():
            named = named.replace(thread_id, f"<{role}>")
        if named in wanted:
            occurred.append(named)
        else:
            remaining.append(problem)  # as said, with the ids to look up in the artifacts
    return remaining, occurred


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception): ")


def stderr_hint(lines: Sequence[str]) -> str:
    """The last Python exception line in ``lines`` (with a validation error's first detail), else ''.

    A server that answers a bare "internal error" says why only on stderr; Codex's log lines are not
    exception lines, so they never match.
    """
    for index in range(len(lines) - 1, -1, -1):
        if _EXCEPTION_LINE.match(lines[index]):
            line = lines[index]
            if "validation error" in line:  # pydantic: the field, then what it should have been
                line = " ".join([line, *(extra.strip() for extra in lines[index + 1 : index + 3])])
            return line
    return ""


def error_cause(
    build: str, method: str, subject: str, error: JsonValue, home: str = "", hint: str = ""
) -> str:
    """``BUILD METHOD SUBJECT: CODE MESSAGE [(stderr: HINT)]`` for a JSON-RPC error answer, CODEX_HOME's path
    shortened to ``$CODEX_HOME``."""
    if isinstance(error, dict):
        code, message = error.get("code", "?"), str(error.get("message", json.dumps(error)))
    else:
        code, message = "?", str(error)
    # Codex repeats a wrapped error's context ("X: Y: X: Y: why"): each segment is said once.
    message = ": ".join(dict.fromkeys(message.split(": ")))
    cause = f"{build} {method}{f' {subject}' if subject else ''}: {code} {message}"
    if hint:
        cause += f" (stderr: {hint})"
    return cause.replace(home, "$CODEX_HOME") if home else cause


class StorageRpc(AppServerRpc):
    """An app-server client that numbers its requests and names build, method and thread when one fails."""

    def __init__(self, rpc: AppServerRpc, build: str, home: str) -> None:
        super().__init__(rpc.handle)
        self.transcript = rpc.transcript
        self.messages = rpc.messages
        self.build = build
        self.home = home
        self._next_id = 100

    async def request(self, method: str, params: JsonObj, subject: str = "") -> JsonObj:
        """The result of ``method``; an error answer raises :class:`ScenarioError` with its code and message."""
        self._next_id += 1
        request_id = self._next_id
        stderr_seen = len(self.handle.stderr_lines)
        await self._send({"id": request_id, "method": method, "params": params})
        for _ in range(100_000):
            message = await self._receive(f"{self.build} answer to {method} {subject}".rstrip())
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    hint = await self._hint(message["error"], stderr_seen)
                    raise ScenarioError(
                        error_cause(self.build, method, subject, message["error"], self.home, hint)
                    )
                result = message.get("result")
                if not isinstance(result, dict):
                    raise ScenarioError(f"{self.build} {method} {subject}: answered without a result object")
                return result
            self.messages.append(message)
        raise ScenarioError(f"{self.build} {method} {subject}: no answer")

    async def _hint(self, error: JsonValue, seen: int) -> str:
        """The exception behind a bare "internal error" answer, once stderr's drain has caught up (<= 2 s)."""
        text = str(error.get("message", "")) if isinstance(error, dict) else ""
        if not text.startswith("internal error while handling"):
            return ""  # the message already says why
        for _ in range(40):
            hint = stderr_hint(self.handle.stderr_lines[seen:])
            if hint:
                return hint
            await asyncio.sleep(0.05)  # polling the drain task's list, bounded above
        return ""

    async def turn(self, thread_id: str, text: str, *, approve: bool = False) -> JsonObj:
        """Start a turn and read until it completes, accepting approvals; the completed turn."""
        self.messages.clear()
        turn_input = [{"type": "text", "text": text, "textElements": []}]
        await self.request("turn/start", {"threadId": thread_id, "input": turn_input}, f"thread {thread_id}")
        return await self.until_turn_completed(thread_id, approve=approve)

    async def until_turn_completed(self, thread_id: str, *, approve: bool = False) -> JsonObj:
        """Read until ``turn/completed`` for ``thread_id``; fail on a failed turn or an unexpected approval."""
        approvals = 0
        where = f"{self.build} thread {thread_id}"
        for _ in range(100_000):
            message = await self._receive(f"{where} turn/completed")
            self.messages.append(message)
            method = str(message.get("method", ""))
            if method.endswith("requestApproval") and "id" in message:
                if not approve:
                    raise ScenarioError(f"{where}: unexpected {method}")
                approvals += 1
                await self.respond(message["id"], {"decision": "accept"})
            params = message.get("params")
            if (
                method != "turn/completed"
                or not isinstance(params, dict)
                or params.get("threadId") != thread_id
            ):
                continue
            turn = params.get("turn")
            turn = turn if isinstance(turn, dict) else {}
            if turn.get("status") != "completed":
                raise ScenarioError(f"{where}: turn ended {turn.get('status')}: {_short(turn.get('error'))}")
            if approve and not approvals:
                raise ScenarioError(f"{where}: the escalated command ran without an approval request")
            return turn
        raise ScenarioError(f"{where}: no turn/completed")
