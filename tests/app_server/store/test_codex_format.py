"""The on-disk format shared with Codex, without the binary: what the store writes is Codex's line format and
reads back the same; Codex's recorded rollouts rebuild into the turns Codex's own thread/read answered; the
writer lock is Codex's; the history projection has the rows Codex writes for the same rollout."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app_server.store import ThreadLockedError, ThreadStore, new_uuid7
from app_server.store import records as r
from app_server.store.codex_format import decode, encode
from app_server.store.codex_schema import RECORDING, ensure_database
from app_server.store.reconstruct import reconstruct
from app_server.store.rollout_file import read_records

DATA = Path(__file__).resolve().parents[2] / "data" / "storage"
CODEX = DATA / "codex_0169"
META = {"cwd": "/ws", "modelProvider": "mock", "model": "m", "source": "vscode", "cliVersion": "0.169.0",
        "originator": "pycodex_tests"}  # fmt: skip


def _user(text: str) -> dict[str, Any]:
    return {"type": "userMessage", "id": new_uuid7(), "clientId": None,
            "content": [{"type": "text", "text": text, "text_elements": []}]}  # fmt: skip


def _agent(text: str) -> dict[str, Any]:
    return {"type": "agentMessage", "moderation": None, "id": "item_0", "text": text, "phase": None,
            "memoryCitation": None, "delivery": None, "questions": None}  # fmt: skip


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write_turn(store: ThreadStore) -> tuple[str, str, Path]:
    writer = store.create_thread(META)
    turn = new_uuid7()
    writer.turn_started(turn, started_at=100)
    writer.item_completed(turn, {**_user("say hello"), "startedAtMs": 5, "completedAtMs": 6})
    writer.response_items([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}])
    writer.item_completed(turn, {**_agent("hello there"), "startedAtMs": 7, "completedAtMs": 8})
    writer.turn_ended(turn, "completed", completed_at=101, duration_ms=900)
    assert writer.path is not None
    return writer.thread_id, turn, writer.path


def test_the_store_writes_codex_lines_and_reads_them_back(tmp_path: Path) -> None:
    with ThreadStore(tmp_path / "home", fsync=False) as store:
        thread_id, turn, path = _write_turn(store)
        lines = _lines(path)
        assert [(x["type"], x["payload"].get("type")) for x in lines] == [
            ("session_meta", None), ("event_msg", "task_started"), ("event_msg", "item_completed"),
            ("response_item", "message"), ("event_msg", "item_completed"), ("event_msg", "task_complete"),
        ]  # fmt: skip
        assert [x["ordinal"] for x in lines] == list(range(6))
        meta = lines[0]["payload"]
        assert (meta["id"], meta["session_id"], meta["model_provider"], meta["cli_version"]) == (
            thread_id, thread_id, "mock", "0.169.0")  # fmt: skip
        user = lines[2]["payload"]
        assert user["item"]["type"] == "UserMessage" and (user["started_at_ms"], user["completed_at_ms"]) == (5, 6)
        end = lines[5]["payload"]
        assert (end["turn_id"], end["started_at"], end["last_agent_message"]) == (turn, 100, "hello there")
        (rebuilt,) = store.load_thread(thread_id).turns
        assert [i["type"] for i in rebuilt["items"]] == ["userMessage", "agentMessage"]
        assert rebuilt["items"][1] == {**_agent("hello there"), "startedAtMs": 7, "completedAtMs": 8}
        assert (rebuilt["status"], rebuilt["startedAt"], rebuilt["completedAt"]) == ("completed", 100, 101)


@pytest.mark.parametrize(
    ("type_", "payload"),
    [
        (r.TURN_STARTED, {"turnId": "t", "rootTurnId": "t", "startedAt": 1, "gitInfo": {"sha": "a", "branch": "b",
                                                                                      "originUrl": None}}),
        (r.TURN_ENDED, {"turnId": "t", "status": "failed", "completedAt": 2, "durationMs": 3,
                        "error": {"message": "boom", "codexErrorInfo": "other", "additionalDetails": None}}),
        (r.TURN_ENDED, {"turnId": "t", "status": "interrupted", "error": None, "completedAt": 2, "durationMs": 3}),
        (r.COMPACTED, {"replacementHistory": [{"type": "message", "role": "user", "content": []}]}),
        (r.THREAD_NAME, {"name": "a name"}),
        (r.THREAD_SETTINGS, {"settings": {"model": "m", "cwd": "/x"}}),
        (r.TURNS_REVERTED, {"beforeTurnId": "t"}),
    ],
)  # fmt: skip
def test_each_logical_record_round_trips_through_its_codex_line(type_: str, payload: dict[str, Any]) -> None:
    line_type, line_payload = encode(type_, payload, thread_id="th")
    decoded = decode(line_type, json.loads(json.dumps(line_payload)))
    assert decoded is not None and decoded[0] == type_
    for key, value in payload.items():
        assert decoded[1].get(key) == value, key


@pytest.mark.parametrize("scenario", sorted(p.stem for p in CODEX.glob("[a-h]_*.json")))
def test_codex_rollouts_rebuild_into_the_turns_codex_served(scenario: str) -> None:
    # The normalizer's placeholders stand for numbers (and left the work folder in FileChange keys): read them
    # as numbers, and compare what the items are, not their recorded numbers.
    text = re.sub(r"/tmp/tmp\w+/work", "<CWD>", (CODEX / f"{scenario}.json").read_text())
    recording = json.loads(text.replace('"<NUM>"', "0"))
    answers = [k["answer"]["result"] for k in recording["rpc"] if k.get("method") == "thread/read"]
    served = answers[-1]["thread"]
    rollout = next(ro for ro in recording["rollouts"] if served["id"] in ro["path"])
    records = [rec for line in rollout["lines"]
               if (rec := decode(line["type"], line["payload"])) is not None]  # fmt: skip
    parent = [ro for ro in recording["rollouts"] if ro is not rollout]
    if scenario == "f_fork":  # the fork's history starts in its parent's rollout (history_base)
        end = rollout["lines"][0]["payload"]["history_base"]["end_ordinal_exclusive"]
        inherited = [(line["ordinal"], decode(line["type"], line["payload"])) for line in parent[0]["lines"][1:]]
        records = [records[0], *(rec for ordinal, rec in inherited if rec is not None and ordinal < end), *records[1:]]
    loaded = reconstruct([r.Record("", i, t, p) for i, (t, p) in enumerate(records)], path=None, archived=False)
    assert [(t["id"], t["status"]) for t in loaded.turns] == [(t["id"], t["status"]) for t in served["turns"]]
    for mine, theirs in zip(loaded.turns, served["turns"], strict=True):
        assert [(i["type"], i["id"]) for i in mine["items"]] == [(i["type"], i["id"]) for i in theirs["items"]]
        # test_codex_items.py compares each conversion field by field; here the whole item, as served.
        assert mine["items"] == theirs["items"]
    assert loaded.preview == served["preview"]


def test_a_thread_open_in_one_store_is_refused_by_another_with_codexs_words(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ThreadStore(home, fsync=False) as first, ThreadStore(home, fsync=False) as second:
        writer = first.create_thread(META)
        lock = home / "thread-writer-locks" / f"{writer.thread_id}.lock"
        assert lock.exists()
        with pytest.raises(ThreadLockedError, match=f"^thread {writer.thread_id} already has an active writer$"):
            second.open_writer(writer.thread_id)
        first.close_writer(writer.thread_id)
        assert not lock.exists()  # let go as Codex lets go: the file is removed
        second.open_writer(writer.thread_id)
        with pytest.raises(ThreadLockedError):
            first.archive(writer.thread_id)


def test_the_history_projection_has_the_rows_codex_writes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert ensure_database(home, "thread_history_1.sqlite")
    schema = json.loads(RECORDING.read_text())["databases"]["thread_history_1.sqlite"]
    conn = sqlite3.connect(home / "thread_history_1.sqlite")
    made = [(t, n, s) for t, n, s in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL")]
    assert sorted(made) == sorted((o["type"], o["name"], o["sql"]) for o in schema["objects"])
    with ThreadStore(home, fsync=False) as store:
        thread_id, turn, path = _write_turn(store)
    size = path.stat().st_size
    lines = path.read_bytes().splitlines(keepends=True)
    ((status, first_user, final_agent, start, end_ordinal, end_offset),) = conn.execute(
        "SELECT status, first_user_item_id, final_agent_item_id, rollout_byte_offset, rollout_end_ordinal, "
        "rollout_end_byte_offset FROM thread_turns WHERE thread_id = ? AND turn_id = ?", (thread_id, turn)
    ).fetchall()
    assert (status, final_agent, end_ordinal) == ("completed", "item_0", 5)
    assert (start, end_offset) == (len(lines[0]), size)  # the start line's first byte, the end line's last
    items = conn.execute(
        "SELECT item_id, rollout_ordinal, item_type, item_json FROM thread_items WHERE thread_id = ? "
        "ORDER BY rollout_ordinal", (thread_id,)
    ).fetchall()
    assert [(i[1], i[2]) for i in items] == [(2, "userMessage"), (4, "agentMessage")]
    assert items[0][0] == first_user and json.loads(items[1][3]) == _agent("hello there")
    assert conn.execute("SELECT next_rollout_byte_offset, next_rollout_ordinal FROM thread_history_projection_state "
                        "WHERE thread_id = ?", (thread_id,)).fetchone() == (size, 6)  # fmt: skip
    conn.close()


def test_a_thread_codex_has_not_projected_to_its_end_is_left_to_codex(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ThreadStore(home, fsync=False) as store:
        thread_id, _turn, path = _write_turn(store)
    conn = sqlite3.connect(home / "thread_history_1.sqlite")
    with conn:  # as an earlier pycodex left it: the rollout is there, the projection knows nothing of it
        for table in ("thread_turns", "thread_items", "thread_history_projection_state"):
            conn.execute(f"DELETE FROM {table}")
    with ThreadStore(home, fsync=False) as store:
        store.open_writer(thread_id).turn_started(new_uuid7())
    assert conn.execute("SELECT COUNT(*) FROM thread_turns").fetchone() == (0,)  # half a thread would mislead
    conn.close()
    assert [rec.type for rec in read_records(path)][-1] == r.TURN_STARTED
