"""The thread state database in process: read-state revisions, goals, sections, migrations, a damaged file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app_server.store.thread_sections import SectionNotFound
from app_server.store.thread_state import (
    MIGRATIONS,
    PINNED_SECTION_ID,
    STATE_FILE,
    ReadStateConflict,
    ThreadStateDb,
)

T = "01a20000-0000-7000-8000-000000000001"


def test_read_state_revisions_guard_updates_and_survive_reopening(tmp_path: Path) -> None:
    db = ThreadStateDb(tmp_path)
    first = db.read_state(T, default_turn="turn-1")
    assert first["firstUnread"] == {"type": "turn", "turnId": "turn-1"}
    assert db.read_state(T) == first  # stored: the same revision again
    later = db.turn_completed(T, "turn-2")
    assert later["firstUnread"] == first["firstUnread"] and later["revision"] != first["revision"]
    with pytest.raises(ReadStateConflict) as conflict:
        db.update(T, "read", first["revision"])
    assert conflict.value.current == later
    read = db.update(T, "read", later["revision"])
    assert read["firstUnread"] is None
    assert db.turn_completed(T, "turn-3")["firstUnread"] == {"type": "turn", "turnId": "turn-3"}
    db.close()
    again = ThreadStateDb(tmp_path)
    assert again.read_state(T)["firstUnread"] == {"type": "turn", "turnId": "turn-3"}
    with pytest.raises(ReadStateConflict):
        again.update("01a20000-0000-7000-8000-000000000002", "read", "never-seen")


def test_goals_and_sections(tmp_path: Path) -> None:
    db = ThreadStateDb(tmp_path)
    with pytest.raises(LookupError):
        db.set_goal(T, objective=None, status="paused", token_budget=None, budget_given=False)
    goal = db.set_goal(T, objective="ship", status=None, token_budget=5, budget_given=True)
    assert (goal.status, goal.token_budget) == ("active", 5)
    kept = db.set_goal(T, objective=None, status="paused", token_budget=None, budget_given=False)
    assert (kept.objective, kept.status, kept.token_budget) == ("ship", "paused", 5)
    assert db.clear_goal(T) and not db.clear_goal(T) and db.goal(T) is None

    assert [s["id"] for s in db.sections()] == [PINNED_SECTION_ID]
    work = db.create_section("Work", None)
    db.move(T, work["id"], None)
    assert db.membership(T) is not None and db.section_threads(work["id"]) == [T]
    assert db.delete_section(work["id"]) == [T]
    assert db.membership(T) is None  # the membership went with the section
    with pytest.raises(SectionNotFound):
        db.move(T, work["id"], None)


def test_a_damaged_file_is_served_from_memory_and_migrations_are_versioned(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_bytes(b"not a database at all" * 100)
    db = ThreadStateDb(tmp_path)  # warns, keeps serving from memory
    assert db.read_state(T)["firstUnread"] == {"type": "threadStart"}
    healthy = tmp_path / "ok"
    ThreadStateDb(healthy).close()
    version = sqlite3.connect(healthy / STATE_FILE).execute("PRAGMA user_version").fetchone()[0]
    assert version == len(MIGRATIONS)


def test_an_older_schema_gets_the_remaining_migrations(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / STATE_FILE)
    old.executescript(f"{MIGRATIONS[0]}\nPRAGMA user_version = 1;")
    old.execute("INSERT INTO read_state VALUES (?, NULL, NULL, 'r1')", (T,))
    old.commit()
    old.close()
    db = ThreadStateDb(tmp_path)
    assert db.read_state(T)["firstUnread"] is None  # the row from before the upgrade is kept
    assert [s["name"] for s in db.sections()] == ["Pinned"]  # and a later migration's row is there
    db.close()
    version = sqlite3.connect(tmp_path / STATE_FILE).execute("PRAGMA user_version").fetchone()[0]
    assert version == len(MIGRATIONS)
