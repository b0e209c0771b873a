"""Codex 0.169's rollout line format, both ways: the store's logical records <-> the lines Codex writes and reads.

The store works on logical records (``records.SESSION_META``, ``TURN_STARTED``, ``ITEM_COMPLETED``, ...; their
payloads in v2 wire shape, camelCase). On disk every rollout is in Codex's format, so Codex lists, reads,
resumes and forks what pycodex wrote and the other way round:

=========================  ===================================================================================
logical record             Codex line (``type`` / ``payload.type``)
=========================  ===================================================================================
session_meta (camelCase)   ``session_meta`` with Codex's snake_case keys; pycodex-only keys under ``pycodex``
turn_started               ``event_msg`` / ``task_started``
turn_ended                 ``event_msg`` / ``task_complete`` (``error`` set when failed), ``turn_aborted``
item_completed             ``event_msg`` / ``item_completed`` with Codex's core item (``codex_items``); the v2
                           item rides along as ``pycodex_item`` only when the core item cannot carry all of it;
                           a v2 type Codex has no core item for is a ``pycodex_item_completed`` line
response_item              ``response_item`` (the same Responses item)
compacted                  ``compacted`` with ``replacement_history``
token_usage                ``event_msg`` / ``token_count``
thread_name                ``event_msg`` / ``thread_name_updated`` (Codex also reads session_index.jsonl)
thread_settings            ``pycodex_thread_settings``
turns_reverted             ``event_msg`` / ``thread_rolled_back`` (``num_turns``; the first dropped turn's id as
                           ``pycodex_before_turn_id``); ``pycodex_turns_reverted`` when the count is unknown
=========================  ===================================================================================

Codex skips line types and fields it does not know (checked against the 0.169 binary), which is where
pycodex keeps what Codex has no place for. Reading accepts Codex 0.168-0.171 lines and the lines earlier
pycodex builds wrote (their record types are the logical ones, so they pass through unchanged).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Final

from pycodex.json_types import JsonObj, JsonValue

from . import records as r
from .codex_items import core_from_v2, v2_from_core

log = logging.getLogger(__name__)

EVENT_MSG: Final = "event_msg"
PYCODEX_KEY: Final = "pycodex"  # pycodex-only session_meta keys (Codex ignores unknown fields)
PYCODEX_ITEM: Final = "pycodex_item"
PYCODEX_ITEM_COMPLETED: Final = "pycodex_item_completed"
PYCODEX_THREAD_SETTINGS: Final = "pycodex_thread_settings"
PYCODEX_TURNS_REVERTED: Final = "pycodex_turns_reverted"
TURNS_ROLLED_BACK: Final = "turns_rolled_back"  # logical: Codex's thread_rolled_back {numTurns}
TURN_ERROR: Final = "turn_error"  # logical: Codex's `error` event, which fails the open turn

#: session_meta: v2 (camelCase) key -> Codex key, for the plain values both sides have.
_META_KEYS: Final = (
    ("id", "id"),
    ("sessionId", "session_id"),
    ("forkedFromId", "forked_from_id"),
    ("cwd", "cwd"),
    ("originator", "originator"),
    ("cliVersion", "cli_version"),
    ("modelProvider", "model_provider"),
    ("historyMode", "history_mode"),
    ("agentNickname", "agent_nickname"),
    ("agentRole", "agent_role"),
    ("agentPath", "agent_path"),
)
#: Codex's SessionSource values that are plain strings; anything else is written as "vscode" (what an
#: app-server client is to Codex) with pycodex's own value kept under ``pycodex``.
_REQUIRED_STRINGS: Final = ("model_provider", "cwd", "originator", "cli_version")
_CODEX_SOURCES: Final = frozenset({"cli", "vscode", "exec", "mcp"})


def is_legacy_meta(payload: JsonObj) -> bool:
    """Whether a session_meta payload was written by a pycodex build before the Codex format (camelCase keys)."""
    return "session_id" not in payload and ("sessionId" in payload or "createdAtMs" in payload)


# -- writing --------------------------------------------------------------------------------------------


def encode_meta(meta: JsonObj, now_ms: int) -> JsonObj:
    """Codex's session_meta payload for the store's metadata dict (``createdAtMs`` stamps ``timestamp``)."""
    created = meta.get("createdAtMs")
    out: JsonObj = {}
    for v2_key, codex_key in _META_KEYS:
        if meta.get(v2_key) is not None:
            out[codex_key] = meta[v2_key]
    out.setdefault("session_id", meta.get("id"))
    out["timestamp"] = r.utc_timestamp(created if isinstance(created, int) else now_ms)
    source = meta.get("source")
    out["source"] = source if isinstance(source, str) and source in _CODEX_SOURCES else "vscode"
    for key in _REQUIRED_STRINGS:  # Codex cannot read a session_meta without them; "" reads back as absent
        out.setdefault(key, "")
    base = meta.get("baseInstructions")
    if isinstance(base, str):
        out["base_instructions"] = {"text": base}
    mapped = {key for key, _ in _META_KEYS} | {"baseInstructions"}
    # A mapped key that is null goes along too: Codex needs a string there, pycodex reads back the null.
    out[PYCODEX_KEY] = {k: v for k, v in meta.items() if k not in mapped or v is None}
    return out


def encode(type_: str, payload: JsonObj, *, thread_id: str) -> tuple[str, JsonObj]:
    """The Codex line (type, payload) for one logical record (session_meta is `encode_meta`'s)."""
    if type_ == r.TURN_STARTED:
        return EVENT_MSG, {
            "type": "task_started",
            "turn_id": payload.get("turnId"),
            "root_turn_id": payload.get("rootTurnId") or payload.get("turnId"),
            "started_at": payload.get("startedAt"),
            "model_context_window": None,
            "collaboration_mode_kind": "default",
            **({"pycodex_git_info": payload["gitInfo"]} if "gitInfo" in payload else {}),
        }
    if type_ == r.TURN_ENDED:
        return EVENT_MSG, _encode_turn_end(payload)
    if type_ == r.ITEM_COMPLETED:
        return _encode_item(payload, thread_id)
    if type_ == r.COMPACTED:
        return r.COMPACTED, {"message": "", "replacement_history": payload.get("replacementHistory") or []}
    if type_ == r.TOKEN_USAGE:
        return EVENT_MSG, _encode_token_count(payload)
    if type_ == r.THREAD_NAME:
        return EVENT_MSG, {"type": "thread_name_updated", "thread_id": thread_id, "thread_name": payload.get("name")}
    if type_ == r.THREAD_SETTINGS:
        return PYCODEX_THREAD_SETTINGS, payload
    if type_ == r.TURNS_REVERTED and isinstance(payload.get("numTurns"), int):
        # Codex's own record of a rollback, so Codex drops the turns too; the turn id says which, for pycodex.
        return EVENT_MSG, {"type": "thread_rolled_back", "num_turns": payload["numTurns"],
                           "pycodex_before_turn_id": payload.get("beforeTurnId")}  # fmt: skip
    if type_ == r.TURNS_REVERTED:
        return PYCODEX_TURNS_REVERTED, payload
    return type_, payload  # response_item, and pycodex's own line types


def _encode_turn_end(payload: JsonObj) -> JsonObj:
    turn_id = payload.get("turnId")
    if payload.get("status") == "interrupted":
        return {
            "type": "turn_aborted",
            "turn_id": turn_id,
            "reason": "interrupted",
            "completed_at": payload.get("completedAt"),
            "duration_ms": payload.get("durationMs"),
        }
    out: JsonObj = {
        "type": "task_complete",
        "turn_id": turn_id,
        "root_turn_id": payload.get("rootTurnId") or turn_id,
        "last_agent_message": payload.get("lastAgentMessage"),
        "started_at": payload.get("startedAt"),
        "completed_at": payload.get("completedAt"),
        "duration_ms": payload.get("durationMs"),
    }
    error = payload.get("error")
    if payload.get("status") == "failed":
        message = error.get("message") if isinstance(error, dict) else None
        out["error"] = {"message": message if isinstance(message, str) else "turn failed"}
        out["pycodex_error"] = error  # the whole v2 TurnError (codexErrorInfo, additionalDetails)
    return out


def _encode_item(payload: JsonObj, thread_id: str) -> tuple[str, JsonObj]:
    item = payload.get("item")
    if not isinstance(item, dict):
        return PYCODEX_ITEM_COMPLETED, payload
    bare = {k: v for k, v in item.items() if k not in ("startedAtMs", "completedAtMs")}
    core = _converted(core_from_v2, bare)
    if core is None:
        return PYCODEX_ITEM_COMPLETED, payload
    out: JsonObj = {
        "type": "item_completed",
        "thread_id": thread_id,
        "turn_id": payload.get("turnId"),
        "item": core,
        "started_at_ms": item.get("startedAtMs"),
        "completed_at_ms": item.get("completedAtMs"),
    }
    if _converted(v2_from_core, core) != bare:  # lossy for this item: keep the exact v2 item beside Codex's
        out[PYCODEX_ITEM] = item
    return EVENT_MSG, out


_USAGE_KEYS: Final = (
    ("inputTokens", "input_tokens"),
    ("cachedInputTokens", "cached_input_tokens"),
    ("cacheWriteInputTokens", "cache_write_input_tokens"),
    ("outputTokens", "output_tokens"),
    ("reasoningOutputTokens", "reasoning_output_tokens"),
    ("totalTokens", "total_tokens"),
)


def _usage_to_codex(usage: JsonValue) -> JsonObj:
    source = usage if isinstance(usage, dict) else {}
    return {codex: source.get(v2, 0) or 0 for v2, codex in _USAGE_KEYS}


def _usage_from_codex(usage: JsonValue) -> JsonObj:
    source = usage if isinstance(usage, dict) else {}
    return {v2: source.get(codex, 0) or 0 for v2, codex in (_USAGE_KEYS[-1], *_USAGE_KEYS[:-1])}


def _encode_token_count(payload: JsonObj) -> JsonObj:
    usage = payload.get("tokenUsage")
    usage = usage if isinstance(usage, dict) else {}
    return {
        "type": "token_count",
        "info": {
            "total_token_usage": _usage_to_codex(usage.get("total")),
            "last_token_usage": _usage_to_codex(usage.get("last")),
            "model_context_window": usage.get("modelContextWindow"),
        },
        "rate_limits": None,
        "pycodex_turn_id": payload.get("turnId"),
    }


# -- reading --------------------------------------------------------------------------------------------


def decode_meta(payload: JsonObj) -> JsonObj:
    """The store's metadata dict (camelCase) for a session_meta payload of Codex, pycodex or an older pycodex."""
    if is_legacy_meta(payload):
        return payload
    meta: JsonObj = {}
    for v2_key, codex_key in _META_KEYS:
        if codex_key in payload and not (codex_key in _REQUIRED_STRINGS and payload[codex_key] == ""):
            meta[v2_key] = payload[codex_key]
    meta["source"] = payload.get("source")
    base = payload.get("base_instructions")
    if isinstance(base, dict) and isinstance(base.get("text"), str):
        meta["baseInstructions"] = base["text"]
    stamp = payload.get("timestamp")
    created = r.parse_timestamp_ms(stamp) if isinstance(stamp, str) else None
    if created is not None:
        meta["createdAtMs"] = created
    history_base = payload.get("history_base")
    if isinstance(history_base, dict):
        meta["historyBase"] = history_base  # a Codex fork: its history starts in the parent's rollout
    extra = payload.get(PYCODEX_KEY)
    if isinstance(extra, dict):
        meta.update(extra)
    return meta


def decode(type_: str, payload: JsonObj) -> tuple[str, JsonObj] | None:
    """The logical record for one rollout line (Codex's, pycodex's or an older pycodex's), or None when the
    line says nothing the store keeps (world_state, turn_context details, rate limits, ...)."""
    if type_ == r.SESSION_META:
        return r.SESSION_META, decode_meta(payload)
    if type_ == EVENT_MSG:
        return _decode_event(payload)
    if type_ == r.RESPONSE_ITEM:
        return r.RESPONSE_ITEM, _model_item(payload)
    if type_ == r.COMPACTED:
        history = payload.get("replacement_history", payload.get("replacementHistory"))
        items = [_model_item(i) for i in history if isinstance(i, dict)] if isinstance(history, list) else []
        return r.COMPACTED, {"replacementHistory": items}
    if type_ == "turn_context":
        settings = {k: payload[c] for k, c in (("cwd", "cwd"), ("model", "model")) if isinstance(payload.get(c), str)}
        if "effort" in payload:
            settings["effort"] = payload["effort"]
        return (r.THREAD_SETTINGS, {"settings": settings}) if settings else None
    if type_ == PYCODEX_ITEM_COMPLETED:
        return r.ITEM_COMPLETED, payload
    if type_ == PYCODEX_THREAD_SETTINGS:
        return r.THREAD_SETTINGS, payload
    if type_ == PYCODEX_TURNS_REVERTED:
        return r.TURNS_REVERTED, payload
    if type_ in _LEGACY_TYPES:
        return type_, payload
    return None


#: Record types of pycodex builds before the Codex format, read as they are.
_LEGACY_TYPES: Final = frozenset(
    {r.TURN_STARTED, r.TURN_ENDED, r.ITEM_COMPLETED, r.TOKEN_USAGE, r.THREAD_SETTINGS, r.THREAD_NAME, r.TURNS_REVERTED}
)

#: Fields Codex keeps on a stored Responses item that are not part of the Responses API.
_INTERNAL_ITEM_KEYS: Final = ("internal_chat_message_metadata_passthrough",)


def _model_item(item: JsonObj) -> JsonObj:
    if not any(key in item for key in _INTERNAL_ITEM_KEYS):
        return item
    return {k: v for k, v in item.items() if k not in _INTERNAL_ITEM_KEYS}


def _decode_event(p: JsonObj) -> tuple[str, JsonObj] | None:
    kind = p.get("type")
    if kind in ("task_started", "turn_started"):
        started: JsonObj = {"turnId": p.get("turn_id"), "rootTurnId": p.get("root_turn_id"),
                            "startedAt": p.get("started_at")}  # fmt: skip
        if isinstance(p.get("pycodex_git_info"), dict):
            started["gitInfo"] = p["pycodex_git_info"]
        return r.TURN_STARTED, started
    if kind in ("task_complete", "turn_complete"):
        error = p.get("pycodex_error", p.get("error"))
        failed = isinstance(p.get("error"), dict)
        if failed and "pycodex_error" not in p:
            error = {"message": p["error"].get("message"), "codexErrorInfo": None, "additionalDetails": None}
        return r.TURN_ENDED, {
            "turnId": p.get("turn_id"),
            "status": "failed" if failed else "completed",
            "error": error if failed else None,
            "completedAt": p.get("completed_at"),
            "durationMs": p.get("duration_ms"),
        }
    if kind == "turn_aborted":
        return r.TURN_ENDED, {"turnId": p.get("turn_id"), "status": "interrupted", "error": None,
                              "completedAt": p.get("completed_at"), "durationMs": p.get("duration_ms")}  # fmt: skip
    if kind == "item_completed":
        return _decode_item(p)
    if kind == "token_count":
        info = p.get("info")
        if not isinstance(info, dict):
            return None
        usage = {
            "total": _usage_from_codex(info.get("total_token_usage")),
            "last": _usage_from_codex(info.get("last_token_usage")),
            "modelContextWindow": info.get("model_context_window"),
        }
        return r.TOKEN_USAGE, {"turnId": p.get("pycodex_turn_id"), "tokenUsage": usage}
    if kind == "thread_name_updated":
        return r.THREAD_NAME, {"name": p.get("thread_name")}
    if kind == "thread_rolled_back" and isinstance(p.get("pycodex_before_turn_id"), str):
        return r.TURNS_REVERTED, {"beforeTurnId": p["pycodex_before_turn_id"], "numTurns": p.get("num_turns")}
    if kind == "thread_rolled_back":
        return TURNS_ROLLED_BACK, {"numTurns": p.get("num_turns")}
    if kind == "error":
        return TURN_ERROR, {"message": p.get("message")}
    return None


def _converted(convert: Callable[[JsonObj], JsonObj | None], item: JsonObj) -> JsonObj | None:
    """``convert(item)``, or None when the item lacks what the other shape needs (a partial or newer item is
    then kept in pycodex's own line, or skipped when read, rather than failing the whole rollout)."""
    try:
        return convert(item)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None


def _decode_item(p: JsonObj) -> tuple[str, JsonObj] | None:
    item = p.get(PYCODEX_ITEM)
    if not isinstance(item, dict):
        core = p.get("item")
        converted = _converted(v2_from_core, core) if isinstance(core, dict) else None
        if converted is None:
            log.warning("skipping a Codex item pycodex cannot read: %.200s", json.dumps(core))
            return None
        item = dict(converted)
        for key, codex in (("startedAtMs", "started_at_ms"), ("completedAtMs", "completed_at_ms")):
            if p.get(codex) is not None:
                item[key] = p[codex]
    return r.ITEM_COMPLETED, {"turnId": p.get("turn_id"), "item": item}
