"""Rollout files of the thread store: format, durability points, reconstruction, resume, fork, ephemeral."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from app_server.store import (
    InvalidThreadIdError,
    ThreadLockedError,
    ThreadNotFoundError,
    ThreadStore,
    WriterClosedError,
    new_uuid7,
    parse_thread_id,
    uuid7_timestamp_ms,
)

META = {
    "cwd": "/work/ws",
    "modelProvider": "mock",
    "model": "mock-model",
    "source": "vscode",
    "cliVersion": "0.169.0",
}


def user_item(text: str) -> dict[str, Any]:
    return {
        "type": "userMessage",
        "id": new_uuid7(),
        "clientId": None,
        "content": [{"type": "text", "text": text, "text_elements": []}],
        "startedAtMs": 1,
        "completedAtMs": 1,
    }


def agent_item(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "agentMessage",
        "id": item_id,
        "text": text,
        "phase": None,
        "startedAtMs": 2,
        "completedAtMs": 3,
    }


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with ThreadStore(tmp_path / "home", fsync=False) as s:
        yield s


def test_new_uuid7_makes_version_7_ids_that_carry_their_creation_time() -> None:
    first = new_uuid7(now_ms=1_796_014_122_000)
    parsed = uuid.UUID(first)
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122
    assert uuid7_timestamp_ms(first) == 1_796_014_122_000
    assert new_uuid7(now_ms=1_796_014_122_001) > first
    assert len({new_uuid7() for _ in range(1000)}) == 1000


def test_parse_thread_id_canonicalises_uuids_and_rejects_anything_else() -> None:
    assert parse_thread_id("01A22AC8-A5CE-72F0-8997-201852327224") == "01a22ac8-a5ce-72f0-8997-201852327224"
    with pytest.raises(InvalidThreadIdError, match="invalid thread id"):
        parse_thread_id("../../etc/passwd")
    with pytest.raises(InvalidThreadIdError, match="expected a string"):
        parse_thread_id(42)


def usage_of(total: int) -> dict[str, int]:
    """A whole v2 TokenUsageBreakdown (Codex's token_count keeps every field)."""
    return {"totalTokens": total, "inputTokens": total, "cachedInputTokens": 0, "cacheWriteInputTokens": 0,
            "outputTokens": 0, "reasoningOutputTokens": 0}


def test_create_thread_writes_a_dated_rollout_whose_first_line_is_session_meta(store: ThreadStore) -> None:
    writer = store.create_thread({**META, "baseInstructions": "be brief"})
    assert writer.path is not None
    assert writer.path.name.startswith("rollout-") and writer.path.name.endswith(f"-{writer.thread_id}.jsonl")
    relative = writer.path.relative_to(store.codex_home / "sessions")
    assert len(relative.parts) == 4 and relative.parts[0].isdigit()
    (line,) = lines_of(writer.path)
    assert set(line) == {"timestamp", "ordinal", "type", "payload"}
    assert line["type"] == "session_meta" and line["ordinal"] == 0
    assert line["timestamp"].endswith("Z")
    assert line["payload"]["id"] == writer.thread_id
    # Codex's session_meta: snake_case keys, the instructions as {text}
    assert line["payload"]["session_id"] == writer.thread_id
    assert line["payload"]["base_instructions"] == {"text": "be brief"}
    assert store.load_thread(writer.thread_id).meta["baseInstructions"] == "be brief"


def test_a_completed_turn_is_rebuilt_with_items_history_usage_and_preview(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    turn = new_uuid7()
    writer.turn_started(turn, started_at=100)
    writer.item_completed(turn, user_item("list the files"))
    writer.response_items(
        [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}]
    )
    call = {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}', "call_id": "call_1"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "a\nb\n"}
    writer.response_items([call, output])
    command = {
        "type": "commandExecution",
        "id": "call_1",
        "command": "ls",
        "status": "completed",
        "exitCode": 0,
    }
    writer.item_completed(turn, command)
    writer.item_completed(turn, agent_item("msg_1", "two files"))
    usage = {"total": usage_of(15), "last": usage_of(15), "modelContextWindow": 258400}
    writer.token_usage(turn, usage)
    writer.turn_ended(turn, "completed", completed_at=101, duration_ms=900)

    loaded = store.load_thread(writer.thread_id)
    (rebuilt,) = loaded.turns
    assert rebuilt["status"] == "completed"
    assert (rebuilt["startedAt"], rebuilt["completedAt"], rebuilt["durationMs"]) == (100, 101, 900)
    assert [i["type"] for i in rebuilt["items"]] == ["userMessage", "commandExecution", "agentMessage"]
    assert rebuilt["itemsView"] == "full"
    assert [h["type"] for h in loaded.history] == ["message", "function_call", "function_call_output"]
    assert loaded.token_usage == usage and loaded.token_usage_turn_id == turn
    assert loaded.preview == "list the files"
    thread = loaded.thread(include_turns=True)
    assert thread["id"] == writer.thread_id and thread["sessionId"] == writer.thread_id
    assert thread["status"] == {"type": "notLoaded"} and thread["path"] == str(writer.path)
    assert thread["turns"][0]["items"][2]["text"] == "two files"
    assert loaded.thread()["turns"] == []


def test_a_turn_that_never_ended_is_reported_interrupted(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    turn = new_uuid7()
    writer.turn_started(turn)
    writer.item_completed(turn, user_item("hello"))
    loaded = store.load_thread(writer.thread_id)
    assert loaded.turns[0]["status"] == "interrupted"
    assert loaded.open_turn_ids == [turn]


def test_a_failed_turn_keeps_its_error_and_items(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    turn = new_uuid7()
    writer.turn_started(turn)
    writer.item_completed(turn, user_item("hello"))
    error = {"message": "boom", "codexErrorInfo": "other", "additionalDetails": None, "misalignment": None}
    writer.turn_ended(turn, "failed", error=error)
    (rebuilt,) = store.load_thread(writer.thread_id).turns
    assert rebuilt["status"] == "failed" and rebuilt["error"] == error
    assert len(rebuilt["items"]) == 1


def test_turn_ended_refuses_an_unknown_status(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    with pytest.raises(ValueError, match="invalid turn end status 'done'"):
        writer.turn_ended(new_uuid7(), "done")


def test_item_completed_needs_an_id_and_a_type(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    with pytest.raises(ValueError, match="string 'id' and 'type'"):
        writer.item_completed(new_uuid7(), {"type": "agentMessage"})


def test_an_item_completed_again_replaces_the_earlier_copy_in_place(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    turn = new_uuid7()
    writer.turn_started(turn)
    writer.item_completed(turn, agent_item("msg_1", "draft"))
    writer.item_completed(turn, agent_item("msg_2", "other"))
    writer.item_completed(turn, agent_item("msg_1", "final"))
    items = store.load_thread(writer.thread_id).turns[0]["items"]
    assert [(i["id"], i["text"]) for i in items] == [("msg_1", "final"), ("msg_2", "other")]


def test_compaction_replaces_the_model_history_and_settings_merge(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    writer.response_items([{"type": "message", "role": "user", "content": []}] * 3)
    summary = [{"type": "compaction", "encrypted_content": "abc"}]
    writer.compacted(summary)
    writer.response_items(
        [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "n"}]}]
    )
    writer.settings_changed({"model": "gpt-5.5", "approvalPolicy": "never"})
    writer.settings_changed({"approvalPolicy": "on-request"})
    loaded = store.load_thread(writer.thread_id)
    assert loaded.history[0] == summary[0] and len(loaded.history) == 2
    assert loaded.settings == {"model": "gpt-5.5", "approvalPolicy": "on-request"}


def test_completion_records_are_fsynced_and_history_records_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    with ThreadStore(tmp_path / "home", fsync=True) as store:
        writer = store.create_thread(META)
        turn = new_uuid7()
        synced.clear()
        writer.turn_started(turn)
        writer.response_items([{"type": "message", "role": "user", "content": []}])
        assert synced == []
        writer.item_completed(turn, user_item("hi"))
        assert len(synced) == 1
        writer.turn_ended(turn, "completed")
        assert len(synced) == 2
    with ThreadStore(tmp_path / "home2", fsync=False) as store:
        writer = store.create_thread(META)
        synced.clear()
        writer.item_completed(new_uuid7(), user_item("hi"))
        assert synced == []


def test_an_ephemeral_thread_writes_nothing_and_is_not_listed(store: ThreadStore) -> None:
    writer = store.create_thread({**META, "ephemeral": True})
    turn = new_uuid7()
    writer.turn_started(turn)
    writer.item_completed(turn, user_item("secret"))
    writer.turn_ended(turn, "completed")
    assert writer.path is None
    assert not list((store.codex_home / "sessions").rglob("*.jsonl"))
    assert store.list_threads().threads == []
    with pytest.raises(ThreadNotFoundError):
        store.load_thread(writer.thread_id)


def test_loading_an_unknown_thread_says_no_rollout_found(store: ThreadStore) -> None:
    missing = new_uuid7()
    with pytest.raises(ThreadNotFoundError, match=f"^no rollout found for thread id {missing}$"):
        store.load_thread(missing)
    with pytest.raises(InvalidThreadIdError):
        store.load_thread("not-a-uuid")


def test_a_resumed_thread_continues_the_same_file_with_increasing_ordinals(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ThreadStore(home, fsync=False) as first:
        writer = first.create_thread(META)
        turn = new_uuid7()
        writer.turn_started(turn)
        writer.turn_ended(turn, "completed")
        thread_id, path = writer.thread_id, writer.path
    with ThreadStore(home, fsync=False) as second:
        resumed = second.open_writer(thread_id)
        assert resumed.path == path
        assert second.open_writer(thread_id) is resumed
        turn2 = new_uuid7()
        resumed.turn_started(turn2)
        resumed.item_completed(turn2, user_item("after resume"))
        resumed.turn_ended(turn2, "completed")
        assert [line["ordinal"] for line in lines_of(resumed.path or Path())] == list(range(6))
        assert [t["id"] for t in second.load_thread(thread_id).turns] == [turn, turn2]


def test_a_second_writer_of_the_same_thread_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ThreadStore(home, fsync=False) as first, ThreadStore(home, fsync=False) as second:
        writer = first.create_thread(META)
        with pytest.raises(ThreadLockedError, match="already has an active writer"):
            second.open_writer(writer.thread_id)
        first.close_writer(writer.thread_id)
        assert second.open_writer(writer.thread_id).path == writer.path


def test_a_closed_writer_refuses_appends(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    writer.close()
    with pytest.raises(WriterClosedError, match="is closed"):
        writer.item_completed(new_uuid7(), user_item("late"))


def test_fork_copies_turns_history_usage_and_name_into_a_new_thread(store: ThreadStore) -> None:
    source = store.create_thread(META)
    turn = new_uuid7()
    source.turn_started(turn)
    source.item_completed(turn, user_item("first message"))
    source.response_items(
        [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "f"}]}]
    )
    source.item_completed(turn, agent_item("msg_0", "reply 0"))
    source.token_usage(
        turn, {"total": usage_of(15), "last": usage_of(15), "modelContextWindow": 1}
    )
    source.turn_ended(turn, "completed")
    store.set_name(source.thread_id, "My thread")

    fork_writer, fork = store.fork_thread(source.thread_id, {"cwd": "/other"})
    assert fork.thread_id != source.thread_id and fork_writer.path != source.path
    thread = fork.thread(include_turns=True)
    assert thread["forkedFromId"] == source.thread_id
    assert (
        thread["name"] == "My thread" and thread["preview"] == "first message" and thread["cwd"] == "/other"
    )
    assert [t["id"] for t in thread["turns"]] == [turn]
    assert fork.history == store.load_thread(source.thread_id).history
    assert fork.token_usage == {
        "total": usage_of(15),
        "last": usage_of(15),
        "modelContextWindow": 1,
    }

    turn2 = new_uuid7()
    fork_writer.turn_started(turn2)
    fork_writer.item_completed(turn2, user_item("on the fork"))
    fork_writer.turn_ended(turn2, "completed")
    assert len(store.load_thread(fork.thread_id).turns) == 2
    assert len(store.load_thread(source.thread_id).turns) == 1
    listed = {t["id"]: t for t in store.list_threads().threads}
    assert listed[fork.thread_id]["forkedFromId"] == source.thread_id


def test_an_ephemeral_fork_has_the_history_but_writes_no_file(store: ThreadStore) -> None:
    source = store.create_thread(META)
    turn = new_uuid7()
    source.turn_started(turn)
    source.item_completed(turn, user_item("first"))
    source.turn_ended(turn, "completed")
    writer, fork = store.fork_thread(source.thread_id, ephemeral=True)
    assert writer.path is None and fork.rollout_path is None
    assert fork.thread()["ephemeral"] is True and fork.thread()["forkedFromId"] == source.thread_id
    assert len(fork.turns) == 1
    assert len(list((store.codex_home / "sessions").rglob("*.jsonl"))) == 1


def test_forking_an_unknown_thread_says_no_rollout_found(store: ThreadStore) -> None:
    with pytest.raises(ThreadNotFoundError, match="no rollout found for thread id"):
        store.fork_thread(new_uuid7())


def test_a_tool_call_cut_off_by_a_crash_gets_an_aborted_output_in_the_history(store: ThreadStore) -> None:
    writer = store.create_thread(META)
    answered = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "call_ok"}
    output = {"type": "function_call_output", "call_id": "call_ok", "output": "fine"}
    dangling = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "call_cut"}
    patch = {
        "type": "custom_tool_call",
        "name": "apply_patch",
        "input": "*** Begin Patch",
        "call_id": "call_p",
    }
    writer.response_items([answered, output, dangling, patch])
    history = store.load_thread(writer.thread_id).history
    assert history == [
        answered,
        output,
        dangling,
        {"type": "function_call_output", "call_id": "call_cut", "output": "aborted"},
        patch,
        {"type": "custom_tool_call_output", "call_id": "call_p", "output": "aborted"},
    ]
