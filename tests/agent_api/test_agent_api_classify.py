"""Unit tests of the sans-IO line classifier (agent_api.classify)."""

from __future__ import annotations

import json

from agent_api.classify import ExecClassifier, FlowFlags
from agent_api.pinned import ADD_DIRS_RUNTIME_REJECTION, MODEL_RUNTIME_REJECTION
from agent_api.values import CAP_SESSION_HANDLE, EventKind, SessionSelector


def line(obj: object) -> bytes:
    return json.dumps(obj).encode()


def test_real_codex_turn_maps_to_status_text_and_handle() -> None:
    c = ExecClassifier("codex")
    events = c.feed(line({"type": "thread.started", "thread_id": "t-1"}))
    assert [e.kind for e in events] == [EventKind.STATUS]
    assert events[0].data == {"schema": CAP_SESSION_HANDLE, "session": {"id": "t-1"}}
    warning = c.feed(line({"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": "meta"}}))
    assert [(e.kind, e.channel, e.message) for e in warning] == [(EventKind.STATUS, "warning", "meta")]
    text = c.feed(line({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "hi"}}))
    assert [(e.kind, e.channel, e.text) for e in text] == [(EventKind.TEXT_OUTPUT, "assistant", "hi")]
    failed = c.feed(line({"type": "turn.failed", "error": {"message": "x"}}))
    assert [(e.kind, e.message) for e in failed] == [(EventKind.STATUS, "turn failed")]
    assert c.finish(0, b"").error is None
    assert c.final_message == "hi"


def test_handle_facet_is_attached_once() -> None:
    c = ExecClassifier("codex")
    c.feed(line({"type": "thread.started", "thread_id": "t-1"}))
    again = c.feed(line({"type": "turn.started", "thread_id": "t-1"}))
    assert again[0].data is None


def test_handle_facet_is_synthesized_when_no_status() -> None:
    c = ExecClassifier("codex")
    events = c.feed(line({"type": "item.completed", "thread_id": "t-9", "item": {"type": "agent_message", "text": "x"}}))
    assert [e.kind for e in events] == [EventKind.TEXT_OUTPUT, EventKind.STATUS]
    assert events[1].session_id == "t-9"


def test_oversize_session_id_gets_no_facet() -> None:
    c = ExecClassifier("codex")
    events = c.feed(line({"type": "thread.started", "thread_id": "x" * 1025}))
    assert events[-1].message == "session handle id oversize: len_bytes=1025"
    assert all(e.session_id is None for e in events)


def test_tool_items_carry_a_facet_without_output() -> None:
    c = ExecClassifier("codex")
    item = {"id": "item_1", "type": "command_execution", "command": "echo SECRET-CMD", "aggregated_output": "",
            "exit_code": None, "status": "in_progress"}
    started = c.feed(line({"type": "item.started", "item": item}))
    done = c.feed(line({"type": "item.completed", "item": {**item, "aggregated_output": "SECRET-OUT", "exit_code": 3,
                                                           "status": "failed"}}))
    assert started[0].kind is EventKind.TOOL_CALL and started[0].data["tool"]["phase"] == "start"
    assert done[0].kind is EventKind.TOOL_RESULT
    assert done[0].data["tool"]["status"] == "completed" and done[0].data["tool"]["exit_code"] == 3
    assert "SECRET" not in repr(started + done)


def test_parse_and_normalize_errors_are_redacted() -> None:
    c = ExecClassifier("codex")
    bad = c.feed(b"THIS IS NOT JSON RAW-LINE-SECRET-PARSE")
    assert bad[0].kind is EventKind.ERROR
    assert bad[0].message == "codex stream parse error (redacted): invalid JSON (line_bytes=38)"
    norm = c.feed(line({"no_type": "RAW-LINE-SECRET-NORM"}))
    assert "RAW-LINE-SECRET-NORM" not in repr(norm) and "normalize error" in (norm[0].message or "")
    assert c.saw_stream_error
    assert c.feed(b"   ") == []


def test_unknown_types_are_unknown_events() -> None:
    c = ExecClassifier("codex")
    assert c.feed(line({"type": "future.thing"}))[0].kind is EventKind.UNKNOWN
    assert c.feed(line({"type": "item.completed", "item": {"type": "novel"}}))[0].kind is EventKind.UNKNOWN


def test_error_lines_outside_resume_are_forwarded_verbatim() -> None:
    c = ExecClassifier("codex")
    events = c.feed(line({"type": "error", "message": "transport failure while routing request for model a"}))
    assert [(e.kind, e.message) for e in events] == [
        (EventKind.ERROR, "transport failure while routing request for model a")]


def test_add_dirs_rejection_is_suppressed_and_pinned() -> None:
    c = ExecClassifier("codex", FlowFlags(has_add_dirs=True))
    assert c.feed(line({"type": "error", "message": ADD_DIRS_RUNTIME_REJECTION, "details": {"raw_path": "P"}})) == []
    outcome = c.finish(1, b"ADD_DIR_STDERR_SECRET")
    assert outcome.error == ADD_DIRS_RUNTIME_REJECTION
    assert outcome.tail is not None and outcome.tail.message == ADD_DIRS_RUNTIME_REJECTION
    # Without add_dirs the same line is just an error event.
    plain = ExecClassifier("codex")
    assert plain.feed(line({"type": "error", "message": ADD_DIRS_RUNTIME_REJECTION}))[0].kind is EventKind.ERROR


def test_model_rejection_needs_a_model() -> None:
    c = ExecClassifier("codex", FlowFlags(has_model=True))
    assert c.feed(line({"type": "error", "message": "unknown model MODEL-SECRET", "code": "model_runtime_rejection"})) == []
    assert c.finish(0, b"").error == MODEL_RUNTIME_REJECTION


def test_resume_swallows_transport_errors_and_classifies_selection() -> None:
    for selector, pinned in ((SessionSelector(), "no session found"), (SessionSelector("x"), "session not found")):
        c = ExecClassifier("codex", FlowFlags(resume=selector))
        assert c.feed(line({"type": "error", "message": "transient", "code": "transport_error"})) == []
        assert c.finish(1, b"").error is None  # a transport error alone is no not-found signal
        c2 = ExecClassifier("codex", FlowFlags(resume=selector))
        assert c2.finish(1, b"Error: thread/resume: thread/resume failed: no rollout found for thread id X").error == pinned


def test_selection_failure_needs_no_thread_id() -> None:
    c = ExecClassifier("codex", FlowFlags(resume=SessionSelector()))
    c.feed(line({"type": "thread.started", "thread_id": "t"}))
    outcome = c.finish(1, b"no session found")
    assert outcome.error is None
    assert outcome.tail is not None and outcome.tail.message == "codex exited non-zero: exit_code=1 (stderr redacted)"


def test_unclassified_nonzero_exit_and_signal() -> None:
    c = ExecClassifier("pycodex")
    outcome = c.finish(-9, b"RAW-STDERR-SECRET")
    assert outcome.error is None and outcome.exit_code == -9
    assert outcome.tail is not None and outcome.tail.message == "pycodex exited non-zero: signal=9 (stderr redacted)"


def test_external_sandbox_unknown_flag() -> None:
    c = ExecClassifier("codex", FlowFlags(external_sandbox=True))
    outcome = c.finish(2, b"error: unexpected argument '--dangerously-bypass-approvals-and-sandbox' found")
    assert outcome.error is not None and "does not support" in outcome.error


def test_bounds_split_long_text_and_truncate_messages() -> None:
    c = ExecClassifier("codex")
    text = "é" * 40000  # 80000 bytes
    events = c.feed(line({"type": "item.completed", "item": {"type": "agent_message", "text": text}}))
    assert len(events) == 2 and "".join(e.text or "" for e in events) == text
    long_error = c.feed(line({"type": "error", "message": "m" * 5000}))
    assert long_error[0].message is not None and long_error[0].message.endswith("…(truncated)")
    assert len(long_error[0].message.encode()) <= 4096
