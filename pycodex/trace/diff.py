"""Comparing a recorded server message with a replayed one, ignoring what differs from run to run.

Volatile values (ids, timestamps, durations, paths of the run's home, the user agent) are compared by presence
only: a renamed or dropped field is still a divergence, a new UUID is not."""

from __future__ import annotations

import re

from pycodex.json_types import JsonValue

__all__ = ["IdMap", "first_difference", "is_volatile_key", "substitute"]

_VOLATILE_KEYS = frozenset({"id", "path", "userAgent", "codexHome", "cwd", "sessionId", "processId",
                            "emittedAtMs", "timestamp"})
_VOLATILE_SUFFIXES = ("Id", "At", "AtMs", "Ms", "Path", "Seconds")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)

#: recorded value -> replayed value, learned from volatile fields, applied to later client messages.
IdMap = dict[str, str]


def is_volatile_key(key: str) -> bool:
    """Whether a field's value differs from run to run (ids, times, paths) and is not compared."""
    return key in _VOLATILE_KEYS or key.endswith(_VOLATILE_SUFFIXES)


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def first_difference(expected: JsonValue, actual: JsonValue, ids: IdMap, path: str = "") -> str | None:
    """The JSON path and nature of the first difference, or None; learns volatile id pairs into ``ids``."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            here = f"{path}.{key}" if path else key
            if key not in actual:
                extra = [k for k in actual if k not in expected]
                hint = f" (the server sent {', '.join(extra)} instead)" if extra else ""
                return f"{here}: missing{hint}"
            if is_volatile_key(key):
                _learn(value, actual[key], ids)
                if (value is None) != (actual[key] is None) and not isinstance(value, dict | list):
                    return f"{here}: expected {_show(value)}, got {_show(actual[key])}"
                continue
            found = first_difference(value, actual[key], ids, here)
            if found:
                return found
        for key in actual:
            if key not in expected:
                return f"{path}.{key}: unexpected field" if path else f"{key}: unexpected field"
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path or '$'}: expected {len(expected)} elements, got {len(actual)}"
        for index, (left, right) in enumerate(zip(expected, actual, strict=True)):
            found = first_difference(left, right, ids, f"{path}[{index}]")
            if found:
                return found
        return None
    if type(expected) is not type(actual) or _normal(expected, ids) != _normal(actual, ids):
        return f"{path or '$'}: expected {_show(expected)}, got {_show(actual)}"
    return None


def _normal(value: JsonValue, ids: IdMap) -> JsonValue:
    if isinstance(value, str):
        return _UUID.sub("<uuid>", ids.get(value, value))
    return value


def _learn(recorded: JsonValue, replayed: JsonValue, ids: IdMap) -> None:
    if isinstance(recorded, str) and isinstance(replayed, str) and recorded != replayed:
        ids.setdefault(recorded, replayed)
    elif isinstance(recorded, dict) and isinstance(replayed, dict):
        for key, value in recorded.items():
            if key in replayed:
                _learn(value, replayed[key], ids)
    elif isinstance(recorded, list) and isinstance(replayed, list):
        for left, right in zip(recorded, replayed, strict=False):
            _learn(left, right, ids)


def substitute(value: JsonValue, ids: IdMap) -> JsonValue:
    """``value`` with every recorded id replaced by its replayed counterpart (client messages)."""
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, dict):
        return {key: substitute(item, ids) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, ids) for item in value]
    return value
