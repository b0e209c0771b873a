"""Rebuild a thread (metadata, turns with items, model history, token usage, name, settings) from its records."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pycodex.json_types import JsonObj

from . import codex_format as fmt
from . import records as r
from .errors import StoreError
from .thread_shape import build_thread, preview_of


@dataclass(slots=True)
class LoadedThread:
    """A thread rebuilt from its rollout: metadata, model history, turns, usage and times."""

    thread_id: str
    rollout_path: Path | None
    archived: bool
    meta: JsonObj  # the session_meta payload (what create_thread stored)
    name: str | None = None
    preview: str = ""
    created_at_ms: int = 0
    updated_at_ms: int = 0
    turns: list[JsonObj] = field(default_factory=list)  # wire Turn dicts, itemsView "full"
    # Responses input items for resume/fork; tool calls cut off by a crash get an "aborted" output appended.
    history: list[JsonObj] = field(default_factory=list)
    token_usage: JsonObj | None = None  # wire ThreadTokenUsage {total, last, modelContextWindow}
    token_usage_turn_id: str | None = None
    settings: JsonObj = field(default_factory=dict)  # merged thread_settings records
    open_turn_ids: list[str] = field(default_factory=list)  # started, never ended: reported "interrupted"
    record_count: int = 0

    def thread(self, *, include_turns: bool = False, status: JsonObj | None = None) -> JsonObj:
        """The v2 Thread dict (status notLoaded unless given; environments null for the caller to fill).
        Model, provider and effort are the thread's latest settings (thread/settings/update changes them)."""
        current = {wire: self.settings[key] for key, wire in _SETTING_FIELDS if key in self.settings}
        return build_thread(
            {**self.meta, **current},
            thread_id=self.thread_id,
            path=str(self.rollout_path) if self.rollout_path else None,
            preview=self.preview,
            name=self.name,
            created_at_ms=self.created_at_ms,
            updated_at_ms=self.updated_at_ms,
            turns=[dict(t, items=list(t["items"])) for t in self.turns] if include_turns else [],
            status=status,
        )

    @property
    def last_turn_id(self) -> str | None:
        """The id of the thread's last turn, or None when it has none."""
        return self.turns[-1]["id"] if self.turns else None


#: thread_settings record key -> the Thread field it sets.
_SETTING_FIELDS = (("model", "model"), ("modelProvider", "modelProvider"), ("effort", "reasoningEffort"))


def reconstruct(records: list[r.Record], *, path: Path | None, archived: bool) -> LoadedThread:
    """Rebuild a thread from its rollout ``records``; raises StoreError when they do not start a thread."""
    if not records or records[0].type != r.SESSION_META:
        raise StoreError(f"rollout {path} does not start with a session_meta record")
    meta = records[0].payload
    thread_id = meta.get("id")
    if not isinstance(thread_id, str):
        raise StoreError(f"rollout {path} has no thread id in its session_meta record")
    created = meta.get("createdAtMs")
    first_ms = r.parse_timestamp_ms(records[0].timestamp) or 0
    loaded = LoadedThread(
        thread_id=thread_id,
        rollout_path=path,
        archived=archived,
        meta=meta,
        name=meta.get("name") if isinstance(meta.get("name"), str) else None,
        created_at_ms=created if isinstance(created, int) else first_ms,
        record_count=len(records),
    )
    builder = _TurnBuilder()
    last_ms = first_ms
    for rec in records[1:]:
        last_ms = r.parse_timestamp_ms(rec.timestamp) or last_ms
        _apply(loaded, builder, rec)
    loaded.updated_at_ms = max(last_ms, loaded.created_at_ms)
    loaded.history = close_dangling_calls(loaded.history)
    loaded.turns = builder.finish()
    loaded.open_turn_ids = builder.open_ids
    return loaded


def _apply(loaded: LoadedThread, builder: _TurnBuilder, rec: r.Record) -> None:
    p = rec.payload
    if rec.type == r.RESPONSE_ITEM:
        loaded.history.append(p)
    elif rec.type == r.ITEM_COMPLETED:
        item = p.get("item")
        if isinstance(item, dict):
            builder.item(str(p.get("turnId")), item)
            if not loaded.preview:
                loaded.preview = preview_of(item) or ""
    elif rec.type == r.TURN_STARTED:
        builder.start(p)
        if isinstance(p.get("gitInfo"), dict):  # the repository as the latest turn found it
            loaded.meta = {**loaded.meta, "gitInfo": p["gitInfo"]}
    elif rec.type == r.TURN_ENDED:
        builder.end(p)
    elif rec.type == r.COMPACTED:
        history = p.get("replacementHistory")
        loaded.history = list(history) if isinstance(history, list) else []
    elif rec.type == r.TURNS_REVERTED:
        builder.drop_from(str(p.get("beforeTurnId")))
    elif rec.type == fmt.TURNS_ROLLED_BACK:
        count = p.get("numTurns")
        builder.drop_last(count if isinstance(count, int) else 0)
    elif rec.type == fmt.TURN_ERROR:
        builder.error(p)
    elif rec.type == r.TOKEN_USAGE:
        usage = p.get("tokenUsage")
        if isinstance(usage, dict):
            loaded.token_usage = usage
            turn_id = p.get("turnId")
            loaded.token_usage_turn_id = turn_id if isinstance(turn_id, str) else None
    elif rec.type == r.THREAD_SETTINGS:
        settings = p.get("settings")
        if isinstance(settings, dict):
            loaded.settings.update(settings)
    elif rec.type == r.THREAD_NAME:
        name = p.get("name")
        loaded.name = name if isinstance(name, str) else None
    # Unknown types come from newer writers: skipping them keeps old readers working.


def history_before_turn(records: list[r.Record], turn_id: str) -> list[JsonObj] | None:
    """The model history as it stood when ``turn_id`` started (None when the rollout never started it)."""
    history: list[JsonObj] = []
    for rec in records[1:]:
        p = rec.payload
        if rec.type == r.TURN_STARTED and p.get("turnId") == turn_id:
            return close_dangling_calls(history)
        if rec.type == r.RESPONSE_ITEM:
            history.append(p)
        elif rec.type == r.COMPACTED:
            replacement = p.get("replacementHistory")
            history = list(replacement) if isinstance(replacement, list) else []
    return None


_CALL_OUTPUT_TYPES = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
ABORTED_OUTPUT = "aborted"


def close_dangling_calls(history: list[JsonObj]) -> list[JsonObj]:
    """Give every tool call without an output (the process died while it ran) an "aborted" output right after
    it: the Responses API refuses a history with an unanswered call."""
    answered = {
        item.get("call_id")
        for item in history
        if item.get("type") in _CALL_OUTPUT_TYPES.values() and isinstance(item.get("call_id"), str)
    }
    out: list[JsonObj] = []
    for item in history:
        out.append(item)
        output_type = _CALL_OUTPUT_TYPES.get(str(item.get("type")))
        call_id = item.get("call_id")
        if output_type is not None and isinstance(call_id, str) and call_id not in answered:
            out.append({"type": output_type, "call_id": call_id, "output": ABORTED_OUTPUT})
            answered.add(call_id)
    return out


class _TurnBuilder:
    def __init__(self) -> None:
        self._turns: dict[str, JsonObj] = {}
        self._item_pos: dict[tuple[str, str], int] = {}
        self._ended: set[str] = set()
        self._errors: dict[str, JsonObj] = {}  # Codex's `error` event fails the turn it happened in

    def _turn(self, turn_id: str) -> JsonObj:
        turn = self._turns.get(turn_id)
        if turn is None:
            turn = {
                "id": turn_id,
                "rootTurnId": turn_id,
                "items": [],
                "itemsView": "full",
                "status": "inProgress",
                "error": None,
                "startedAt": None,
                "completedAt": None,
                "durationMs": None,
            }
            self._turns[turn_id] = turn
        return turn

    def start(self, p: JsonObj) -> None:
        turn = self._turn(str(p.get("turnId")))
        turn["rootTurnId"] = p.get("rootTurnId") or turn["id"]
        turn["startedAt"] = p.get("startedAt")

    def end(self, p: JsonObj) -> None:
        turn = self._turn(str(p.get("turnId")))
        status = p.get("status")
        turn["status"] = status if status in r.TURN_END_STATUSES else "interrupted"
        turn["error"] = p.get("error")
        pending = self._errors.pop(turn["id"], None)
        if pending is not None and turn["status"] == "completed":
            turn["status"], turn["error"] = "failed", pending
        turn["completedAt"] = p.get("completedAt")
        turn["durationMs"] = p.get("durationMs")
        self._ended.add(turn["id"])

    def item(self, turn_id: str, item: JsonObj) -> None:
        items: list[JsonObj] = self._turn(turn_id)["items"]
        key = (turn_id, str(item.get("id")))
        pos = self._item_pos.get(key)
        if pos is None:  # a re-completed item (same id) replaces the earlier copy in place
            self._item_pos[key] = len(items)
            items.append(item)
        else:
            items[pos] = item

    def error(self, p: JsonObj) -> None:
        """An error reported in the open turn (Codex writes it before the turn's end)."""
        open_ids = self.open_ids
        if open_ids:
            message = p.get("message")
            self._errors[open_ids[-1]] = {
                "message": message if isinstance(message, str) else "turn failed",
                "codexErrorInfo": None,
                "additionalDetails": None,
            }

    def drop_last(self, count: int) -> None:
        """Forget the last ``count`` turns (Codex's thread/rollback)."""
        ids = list(self._turns)
        if count > 0 and ids:
            self.drop_from(ids[max(0, len(ids) - count)])

    def drop_from(self, turn_id: str) -> None:
        """Forget ``turn_id`` and every turn started after it (thread/revert)."""
        ids = list(self._turns)
        if turn_id not in ids:
            return
        for dropped in ids[ids.index(turn_id):]:
            del self._turns[dropped]
            self._ended.discard(dropped)
        self._item_pos = {k: v for k, v in self._item_pos.items() if k[0] in self._turns}

    @property
    def open_ids(self) -> list[str]:
        return [tid for tid in self._turns if tid not in self._ended]

    def finish(self) -> list[JsonObj]:
        for turn_id in self.open_ids:
            self._turns[turn_id]["status"] = "interrupted"  # the writer died (or is still writing) mid-turn
        return list(self._turns.values())
