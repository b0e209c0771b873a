"""The sans-IO JSON-RPC core: codec, LF framing and the correlating peer, without any IO."""

from __future__ import annotations

import json

import pytest

from pycodex.jsonrpc import (
    ErrorReceived,
    InvalidParams,
    LineBuffer,
    LocalRpcError,
    NotificationReceived,
    OverlongLine,
    RequestReceived,
    ResponseReceived,
    RpcPeer,
    Violation,
    encode,
)


@pytest.mark.parametrize("request_id", [1, 0, -7, "abc", "", 1.5, True, {"a": [1]}, [1, 2], None, 2**70])
def test_request_ids_of_any_json_type_are_echoed_verbatim(request_id: object) -> None:
    peer = RpcPeer()
    raw = json.dumps({"id": request_id, "method": "m", "params": {}})
    msg = peer.receive(raw)
    assert isinstance(msg, RequestReceived)
    out = json.loads(peer.respond(msg.id, {"ok": True}))
    assert out == {"id": request_id, "result": {"ok": True}}
    assert type(out["id"]) is type(request_id)


def test_output_omits_jsonrpc_member_and_accepts_it_on_input() -> None:
    peer = RpcPeer()
    msg = peer.receive(b'{"jsonrpc":"2.0","id":3,"method":"x","params":{}}')
    assert isinstance(msg, RequestReceived)
    assert peer.respond(3, {}) == b'{"id":3,"result":{}}'


def test_second_answer_to_same_id_raises_local_error() -> None:
    peer = RpcPeer()
    peer.receive(b'{"id":1,"method":"x","params":{}}')
    peer.respond(1, None)
    with pytest.raises(LocalRpcError):
        peer.respond(1, None)
    with pytest.raises(LocalRpcError):
        peer.respond_error(1, InvalidParams("nope"))


def test_answer_to_a_request_never_received_raises_local_error() -> None:
    with pytest.raises(LocalRpcError):
        RpcPeer().respond("ghost", {})


def test_duplicate_in_flight_id_is_flagged_and_not_tracked_twice() -> None:
    peer = RpcPeer()
    first = peer.receive(b'{"id":5,"method":"a","params":{}}')
    second = peer.receive(b'{"id":5,"method":"b","params":{}}')
    assert isinstance(first, RequestReceived) and not first.duplicate
    assert isinstance(second, RequestReceived) and second.duplicate
    peer.error_untracked(5, {"code": -32600, "message": "dup"})
    peer.respond(5, {})  # the original is still answerable exactly once
    with pytest.raises(LocalRpcError):
        peer.respond(5, {})


def test_error_response_shape_puts_error_before_id() -> None:
    peer = RpcPeer()
    peer.receive(b'{"id":"r","method":"x","params":{}}')
    assert peer.respond_error("r", InvalidParams("bad `cwd`")) == (
        b'{"error":{"code":-32602,"message":"bad `cwd`"},"id":"r"}'
    )


def test_notification_carries_emitted_at_beside_params() -> None:
    out = json.loads(RpcPeer().notify("thread/started", {"a": 1}, emitted_at_ms=123))
    assert out == {"method": "thread/started", "params": {"a": 1}, "emittedAtMs": 123}


def test_server_requests_get_integer_ids_from_zero_and_responses_are_correlated() -> None:
    peer = RpcPeer()
    id0, data0 = peer.request("item/commandExecution/requestApproval", {"x": 1})
    id1, _ = peer.request("item/fileChange/requestApproval", {})
    assert (id0, id1) == (0, 1)
    assert json.loads(data0) == {"method": "item/commandExecution/requestApproval", "id": 0, "params": {"x": 1}}
    got = peer.receive(b'{"id":1,"result":{"decision":"accept"}}')
    assert got == ResponseReceived(1, {"decision": "accept"}, "item/fileChange/requestApproval")
    err = peer.receive(b'{"id":0,"error":{"code":1,"message":"no"}}')
    assert isinstance(err, ErrorReceived) and err.method == "item/commandExecution/requestApproval"
    assert peer.pending_ids() == []


def test_response_to_unknown_or_forgotten_id_is_a_stray() -> None:
    peer = RpcPeer()
    rid, _ = peer.request("x", None)
    assert peer.forget(rid)
    stray = peer.receive(json.dumps({"id": rid, "result": {}}))
    assert isinstance(stray, ResponseReceived) and stray.method is None


@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"[1,2]", b'[{"id":1,"method":"x"}]', b"42", b'"s"', b"null", b'{"foo":1}', b"",
     b'{"method":5,"id":1}', b'{"id":1}', b"\xff\xfe"],
)
def test_non_messages_become_violations(raw: bytes) -> None:
    assert isinstance(RpcPeer().receive(raw), Violation)


def test_notification_has_no_id() -> None:
    msg = RpcPeer().receive(b'{"method":"initialized"}')
    assert msg == NotificationReceived("initialized", None, False)


def test_line_separators_inside_strings_are_escaped_and_round_trip() -> None:
    text = "a\u2028b\u2029c é"
    line = encode({"t": text})
    assert b"\xe2\x80\xa8" not in line and b"\\u2028" in line and "é".encode() in line
    assert json.loads(line) == {"t": text}


def test_line_buffer_splits_on_lf_only_and_strips_cr() -> None:
    buf = LineBuffer()
    assert buf.feed(b'{"a":"x\xe2\x80\xa8y"}\r\n{"b"') == [b'{"a":"x\xe2\x80\xa8y"}']
    assert buf.feed(b":1}\n\n") == [b'{"b":1}', b""]
    assert buf.feed_eof() == []


def test_line_buffer_drops_overlong_lines_and_recovers() -> None:
    buf = LineBuffer(max_line_bytes=10)
    out = buf.feed(b"x" * 8) + buf.feed(b"y" * 8) + buf.feed(b"z\nok\n")
    assert out == [OverlongLine(17), b"ok"]


def test_line_buffer_keeps_unterminated_last_line_at_eof() -> None:
    buf = LineBuffer()
    assert buf.feed(b'{"id":1') == []
    assert buf.feed_eof() == [b'{"id":1']
