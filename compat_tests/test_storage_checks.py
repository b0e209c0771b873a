"""support/storage.py's comparisons on small hand-made thread/read, thread/list and model-request JSON."""

from __future__ import annotations

import copy

from compat_tests.support.matrix import full_builds, is_slow, pairs
from compat_tests.support.storage import (
    JsonObj,
    compare_listing,
    compare_thread,
    error_cause,
    history_problems,
    item_key,
    requests_with_user_text,
    split_acknowledged,
    stderr_hint,
)


def _thread() -> JsonObj:
    """A thread as Codex 0.169's thread/read includeTurns answers it (fields trimmed)."""
    return {
        "id": "t-1",
        "preview": "run it",
        "name": None,
        "cliVersion": "0.169.0",
        "turns": [
            {
                "id": "turn-1",
                "status": "completed",
                "items": [
                    {
                        "type": "userMessage",
                        "id": "u-1",
                        "content": [{"type": "text", "text": "run it", "text_elements": []}],
                    },
                    {
                        "type": "commandExecution",
                        "id": "call-1",
                        "command": "/bin/bash -lc 'echo hi'",
                        "status": "completed",
                        "exitCode": 0,
                        "aggregatedOutput": "hi\n",
                        "durationMs": 12,
                        "processId": "4711",
                    },
                    {"type": "agentMessage", "id": "msg-1", "text": "ran it", "startedAtMs": 1},
                ],
            }
        ],
    }


def test_a_thread_read_back_the_same_has_no_problems_whatever_its_timings_and_versions() -> None:
    again = _thread()
    again["cliVersion"] = "0.171.0"
    items = again["turns"][0]["items"]
    items[0]["content"][0].pop("text_elements")  # a reader may leave out the empty extras
    items[1].update(durationMs=99, processId="1")
    items[2]["startedAtMs"] = 2
    assert compare_thread(_thread(), again, "B thread/read t-1") == []


def test_a_missing_item_is_named_once_and_does_not_shift_the_others() -> None:
    got = _thread()
    del got["turns"][0]["items"][1]
    assert compare_thread(_thread(), got, "B thread/read t-1") == [
        "B thread/read t-1 turn 1: item 2 (commandExecution call-1) missing"
    ]


def test_a_changed_field_names_the_item_the_field_and_both_values() -> None:
    got = _thread()
    got["turns"][0]["items"][1]["aggregatedOutput"] = ""
    got["preview"] = ""
    assert compare_thread(_thread(), got, "B") == [
        'B: preview "", writer had "run it"',
        'B turn 1: commandExecution call-1 field aggregatedOutput is "", writer had "hi\\n"',
    ]


def test_extra_reordered_and_retyped_items_and_lost_turns_are_problems() -> None:
    got = _thread()
    items = got["turns"][0]["items"]
    items.reverse()
    items.append({"type": "reasoning", "id": "r-1", "summary": []})
    problems = compare_thread(_thread(), got, "B")
    assert problems == [
        "B turn 1: extra item reasoning r-1",
        "B turn 1: items out of order (userMessage u-1, commandExecution call-1, agentMessage msg-1)",
    ]
    retyped = _thread()
    retyped["turns"][0]["items"][2]["type"] = "userMessage"
    assert compare_thread(_thread(), retyped, "B")[0] == "B turn 1: item 3 (agentMessage msg-1) missing"
    retyped["turns"] = []
    assert compare_thread(_thread(), retyped, "B") == ["B: 0 turns (items: none), writer had 1"]


def test_turn_ids_and_statuses_must_survive() -> None:
    got = _thread()
    got["turns"][0].update(id="turn-9", status="interrupted")
    assert compare_thread(_thread(), got, "B") == [
        'B turn 1: id "turn-9", writer had "turn-1"',
        'B turn 1: status "interrupted", writer had "completed"',
    ]


def test_item_keys_keep_the_user_text_and_each_types_fields_only() -> None:
    user, command, _answer = _thread()["turns"][0]["items"]
    assert item_key(user) == {"id": "u-1", "type": "userMessage", "content": ["run it"]}
    assert set(item_key(command)) == {"id", "type", "command", "status", "exitCode", "aggregatedOutput"}
    assert item_key({"type": "somethingNew", "id": "x", "text": "?"}) == {"id": "x", "type": "somethingNew"}


def test_the_listing_must_hold_every_written_thread_with_its_preview_and_name() -> None:
    written: list[JsonObj] = [
        {"id": "t-1", "preview": "a", "name": "named"},
        {"id": "t-2", "preview": "b", "name": None},
    ]
    assert compare_listing(written, [*copy.deepcopy(written), {"id": "t-3"}], "B") == []
    assert compare_listing(written, [{"id": "t-1", "preview": "a", "name": None}], "B") == [
        'B thread/list thread t-1: name null, writer had "named"',
        "B thread/list misses thread t-2 (it listed t-1)",
    ]
    assert compare_listing(written[:1], [], "B") == ["B thread/list misses thread t-1 (it listed nothing)"]


def _request(*items: JsonObj) -> JsonObj:
    return {"path": "/v1/responses", "body": {"input": list(items)}}


def _said(role: str, text: str) -> JsonObj:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def test_the_resumed_request_is_found_by_its_user_text_and_must_carry_the_history() -> None:
    earlier = _request(_said("user", "first"))
    resumed = _request(
        _said("user", "first"),
        {"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "hi from the command"},
        _said("assistant", "ran it"),
        _said("user", "second"),
    )
    assert requests_with_user_text([earlier, resumed, {"path": "/v1/models"}], "second") == [resumed]
    expected = [("user", "first"), ("function_call_output", "hi from the"), ("assistant", "ran it")]
    assert history_problems(resumed["body"], expected, "B") == []
    # The writer's answer as a user message is not the writer's answer.
    lost = _request(_said("user", "first"), _said("user", "ran it"), _said("user", "second"))
    assert history_problems(lost["body"], expected, "B") == [
        'B: no function_call_output input with "hi from the" (the request had 3 input items)',
        'B: no assistant input with "ran it" (the request had 3 input items)',
    ]


def test_an_error_cause_names_build_method_thread_code_and_the_reason_said_once() -> None:
    home = "/tmp/x/codex-home"
    rollout = f"{home}/sessions/rollout-1.jsonl"
    message = (
        f"failed to read thread: thread-store internal error: failed to read session metadata {rollout}: "
        f"thread-store internal error: failed to read session metadata {rollout}: rollout at {rollout} "
        "does not start with session metadata"
    )
    cause = error_cause("codex@0.169.0", "thread/read", "t-1", {"code": -32603, "message": message}, home)
    assert cause == (
        "codex@0.169.0 thread/read t-1: -32603 failed to read thread: thread-store internal error: failed to "
        "read session metadata $CODEX_HOME/sessions/rollout-1.jsonl: rollout at "
        "$CODEX_HOME/sessions/rollout-1.jsonl does not start with session metadata"
    )
    internal = {"code": -32603, "message": "internal error while handling thread/list"}
    assert error_cause("current", "thread/list", "", internal, hint="KeyError: 'x'") == (
        "current thread/list: -32603 internal error while handling thread/list (stderr: KeyError: 'x')"
    )


def test_the_stderr_hint_is_the_last_python_exception_line_with_a_validation_detail() -> None:
    traceback = [
        "2026-12-02 22:15:17,628 ERROR pycodex.jsonrpc.router: internal error while handling thread/list",
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in f',
        "pydantic_core._pydantic_core.ValidationError: 7 validation errors for ThreadListResponse",
        "data.0.cliVersion",
        "  Input should be a valid string [type=string_type]",
        "    For further information visit https://errors.pydantic.dev",
    ]
    assert stderr_hint(traceback) == (
        "pydantic_core._pydantic_core.ValidationError: 7 validation errors for ThreadListResponse "
        "data.0.cliVersion Input should be a valid string [type=string_type]"
    )
    codex_log = ["2026-12-02T22:15:13Z ERROR codex_app_server: Codex could not find bubblewrap on PATH."]
    assert stderr_hint(codex_log) == ""


def test_storage_runs_the_default_slice_quickly_and_every_ordered_pair_as_slow() -> None:
    assert pairs("storage", {}) == [
        ("current", "current"),
        ("current", "codex@0.169.0"),
        ("codex@0.169.0", "current"),
    ]
    assert not any(is_slow("storage", *pair) for pair in pairs("storage", {}))
    full = pairs("storage", {"PYCODEX_SLOW": "1"})
    assert len(full) == len(full_builds()) ** 2 and ("codex@0.168.0", "codex@0.171.0") in full
    assert is_slow("storage", "codex@0.168.0", "codex@0.171.0")
    assert not is_slow("noise", "codex@0.168.0", "codex@0.171.0")


def test_acknowledged_problems_are_matched_with_thread_ids_named_by_role() -> None:
    ids = {"fork": "01a2-f", "plain": "01a2-p"}
    problems = [
        'B thread/list thread 01a2-f: preview "child", writer had "parent"',
        "B thread/list misses thread 01a2-p",
    ]
    accepted = ['B thread/list thread <fork>: preview "child", writer had "parent"', "never happens"]
    assert split_acknowledged(problems, ids, accepted) == (
        ["B thread/list misses thread 01a2-p"],
        ['B thread/list thread <fork>: preview "child", writer had "parent"'],
    )
