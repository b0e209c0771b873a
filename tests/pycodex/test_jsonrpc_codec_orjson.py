"""The orjson encoding path writes what the stdlib path writes (or hands the message to it)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from pycodex.jsonrpc import codec
from pycodex.jsonrpc.codec import VerbatimString, encode

pytest.importorskip("orjson")

MESSAGES: list[dict[str, Any]] = [
    {"method": "item/agentMessage/delta",
     "params": {"threadId": "t", "turnId": "u", "itemId": "i", "delta": "é 😀"}},
    {"id": 1, "result": {"a": None, "b": [1, 2.5, True, False], "c": {"d": "x\u2028y\u2029z"}}},
    {"id": "r", "result": {"big": 2**70, "neg": -(2**65), "tuple": (1, 2)}},
    {"method": "m", "params": {"chunk": VerbatimString("aGVsbG8="), "n": {1: "int key"}}},
    {"id": 2, "error": {"code": -32603, "message": "ctl \x00\x1f \"quoted\" \\ back"}},
]


@pytest.mark.parametrize("message", MESSAGES)
def test_orjson_and_stdlib_paths_write_the_same_json(message: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = encode(message)
    monkeypatch.setattr(codec, "orjson", None)
    slow = encode(message)
    assert json.loads(fast) == json.loads(slow)
    assert "\u2028".encode() not in fast and "\u2029".encode() not in fast
    assert b"\n" not in fast


def test_verbatim_values_are_written_as_is() -> None:
    line = encode({"method": "m", "params": {"data": VerbatimString("QUJD"), "other": "x"}})
    assert line == b'{"method":"m","params":{"data":"QUJD","other":"x"}}'


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_refused_not_written_as_null(bad: float) -> None:
    with pytest.raises(ValueError):
        encode({"id": 1, "result": {"x": bad}})
