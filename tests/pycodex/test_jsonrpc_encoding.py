"""In-process checks of the sans-IO core's framing and encoding edge cases (foundation issue)."""

from __future__ import annotations

import json
import math

import pytest

from pycodex.jsonrpc import LineBuffer, OverlongLine, RequestReceived, RpcPeer, encode
from pycodex.jsonrpc.errors import InternalError, LocalRpcError


def test_line_and_paragraph_separators_are_escaped_and_other_unicode_kept() -> None:
    line = encode({"id": 1, "result": {"name": "a\u2028b\u2029c \u00e9"}})
    assert b"\n" not in line and "\u2028".encode() not in line and "\u2029".encode() not in line
    assert b"\\u2028" in line and b"\\u2029" in line and "\u00e9".encode() in line
    assert json.loads(line) == {"id": 1, "result": {"name": "a\u2028b\u2029c \u00e9"}}


def test_the_framer_splits_on_lf_only_and_strips_one_cr() -> None:
    framer = LineBuffer()
    text = '{"a":"x\u2028y\u2029z\rw"}\r\n{"b":1}\n{"c"'
    data = text.encode()
    lines = [line for i in range(0, len(data), 3) for line in framer.feed(data[i : i + 3])]
    assert lines == ['{"a":"x\u2028y\u2029z\rw"}'.encode(), b'{"b":1}']
    assert framer.feed_eof() == [b'{"c"']


def test_an_overlong_line_is_dropped_and_the_next_line_still_arrives() -> None:
    framer = LineBuffer(max_line_bytes=10)
    assert framer.feed(b"x" * 25) == []
    assert framer.feed(b"xx\nok\n") == [OverlongLine(27), b"ok"]


def test_a_result_that_is_not_json_leaves_the_request_answerable() -> None:
    peer = RpcPeer()
    msg = peer.receive(b'{"id":"r1","method":"m"}')
    assert isinstance(msg, RequestReceived)
    with pytest.raises(ValueError):
        peer.respond("r1", {"x": math.nan})
    assert peer.is_in_flight("r1")
    error = json.loads(peer.respond_error("r1", InternalError("boom")))
    assert error == {"error": {"code": -32603, "message": "boom"}, "id": "r1"}
    with pytest.raises(LocalRpcError):
        peer.respond("r1", {})
