"""The pure SSE decoder: framing rules, chunk boundaries, truncation."""

from __future__ import annotations

import json

import pytest

from app_server.model.sse import SseDecoder, SseError, SseEvent


def decode(chunks: list[bytes]) -> tuple[list[SseEvent], bool]:
    dec = SseDecoder()
    events = [e for chunk in chunks for e in dec.feed(chunk)] + dec.finish()
    return events, dec.truncated


BODY = (
    ": keep-alive comment\r\n"
    "event: response.created\r\n"
    'data: {"type":"response.created","response":{"id":"r1"}}\r\n'
    "\r\n"
    "event: response.output_text.delta\n"
    'data: {"type":"response.output_text.delta","delta":"héllo → ✓ 😀"}\n'
    "\n"
    "data: line one\r"
    "data: line two\r"
    "id: 7\r"
    "retry: 1500\r"
    "\r"
    "event: response.completed\n"
    'data: {"type":"response.completed"}\n'
    "\n"
).encode()

EXPECTED = [
    SseEvent(event="response.created", data='{"type":"response.created","response":{"id":"r1"}}'),
    SseEvent(
        event="response.output_text.delta",
        data='{"type":"response.output_text.delta","delta":"héllo → ✓ 😀"}',
    ),
    SseEvent(event="message", data="line one\nline two", id="7", retry=1500),
    SseEvent(event="response.completed", data='{"type":"response.completed"}'),
]


def test_a_whole_body_decodes_to_the_expected_events() -> None:
    assert decode([BODY]) == (EXPECTED, False)


@pytest.mark.parametrize("offset", range(len(BODY) + 1))
def test_splitting_the_body_at_any_byte_offset_gives_the_same_events(offset: int) -> None:
    assert decode([BODY[:offset], BODY[offset:]]) == (EXPECTED, False)


def test_feeding_one_byte_at_a_time_gives_the_same_events() -> None:
    assert decode([BODY[i : i + 1] for i in range(len(BODY))]) == (EXPECTED, False)


def test_a_crlf_split_between_chunks_is_one_line_end_not_two() -> None:
    events, truncated = decode([b"data: a\r", b"\ndata: b\r\n\r\n"])
    assert events == [SseEvent(data="a\nb")]
    assert not truncated


def test_a_cr_then_an_empty_chunk_then_lf_is_still_one_line_end() -> None:
    events, truncated = decode([b"data: a\r", b"", b"\ndata: b\n\n"])
    assert events == [SseEvent(data="a\nb")]
    assert not truncated


def test_a_stream_cut_off_inside_an_event_is_reported_as_truncated() -> None:
    events, truncated = decode([b"data: complete\n\n", b'data: {"type":"resp'])
    assert events == [SseEvent(data="complete")]
    assert truncated


def test_a_stream_ending_after_a_field_line_without_a_blank_line_is_truncated() -> None:
    events, truncated = decode([b"data: complete\n\n", b"data: almost\n"])
    assert events == [SseEvent(data="complete")]
    assert truncated


def test_a_stream_ending_on_an_event_boundary_is_not_truncated() -> None:
    assert decode([b"data: x\n\n", b": trailing comment\n"]) == ([SseEvent(data="x")], False)


def test_a_leading_byte_order_mark_is_ignored() -> None:
    assert decode([b"\xef\xbb", b"\xbfdata: x\n\n"]) == ([SseEvent(data="x")], False)


def test_an_event_without_data_is_not_dispatched_but_empty_data_is() -> None:
    events, _ = decode([b"event: ping\n\ndata:\n\n"])
    assert events == [SseEvent(data="")]


def test_only_one_space_after_the_colon_is_stripped_and_unknown_fields_are_ignored() -> None:
    events, _ = decode([b"data:  two spaces\nfoo: bar\ndata:nospace\n\n"])
    assert events == [SseEvent(data=" two spaces\nnospace")]


def test_invalid_utf8_is_replaced_rather_than_raising() -> None:
    events, _ = decode([b"data: \xff\xfe ok\n\n"])
    assert events == [SseEvent(data="\ufffd\ufffd ok")]


def test_an_oversized_event_raises_a_clear_error() -> None:
    dec = SseDecoder(max_event_bytes=64)
    with pytest.raises(SseError, match="larger than 64 bytes"):
        dec.feed(b"data: " + b"x" * 100 + b"\n")


def test_an_oversized_unterminated_line_raises_too() -> None:
    dec = SseDecoder(max_event_bytes=64)
    with pytest.raises(SseError):
        dec.feed(b"data: " + b"x" * 100)


def test_feed_after_finish_is_refused() -> None:
    dec = SseDecoder()
    dec.finish()
    with pytest.raises(SseError, match="after finish"):
        dec.feed(b"data: x\n\n")


def test_large_json_payloads_survive_random_chunking() -> None:
    payload = json.dumps({"type": "response.output_item.done", "item": {"text": "ü" * 5000}})
    body = f"event: e\ndata: {payload}\n\n".encode()
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]
    assert decode(chunks) == ([SseEvent(event="e", data=payload)], False)
