"""SQLite index of the thread store: listing, paging, filters, archive, names, and rebuild from the rollouts."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from app_server.store import (
    InvalidCursorError,
    RolloutWriter,
    ThreadArchivedStateError,
    ThreadNotFoundError,
    ThreadStore,
    new_uuid7,
)


def user_item(text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text, "text_elements": []}]
    return {"type": "userMessage", "id": new_uuid7(), "clientId": None, "content": content}


def make_thread(store: ThreadStore, text: str, **meta: Any) -> RolloutWriter:
    base = {
        "cwd": "/ws/a",
        "modelProvider": "mock",
        "model": "m",
        "source": "vscode",
        "cliVersion": "0.169.0",
    }
    writer = store.create_thread({**base, **meta})
    turn = new_uuid7()
    writer.turn_started(turn)
    writer.item_completed(turn, user_item(text))
    writer.turn_ended(turn, "completed")
    time.sleep(0.003)  # distinct millisecond timestamps make the expected order unambiguous
    return writer


def ids(page_threads: list[dict[str, Any]]) -> list[str]:
    return [t["id"] for t in page_threads]


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with ThreadStore(tmp_path / "home", fsync=False) as s:
        yield s


def test_threads_are_listed_newest_first_with_their_first_user_message_as_preview(store: ThreadStore) -> None:
    older = make_thread(store, "first")
    newer = make_thread(store, "second")
    page = store.list_threads()
    assert ids(page.threads) == [newer.thread_id, older.thread_id]
    assert page.threads[1]["preview"] == "first"
    assert page.threads[0]["status"] == {"type": "notLoaded"} and page.threads[0]["turns"] == []
    assert page.threads[0]["path"] == str(newer.path)
    assert page.next_cursor is None


def test_paging_with_the_cursor_visits_every_thread_exactly_once(store: ThreadStore) -> None:
    created = [make_thread(store, f"t{i}").thread_id for i in range(7)]
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        page = store.list_threads(limit=3, cursor=cursor)
        seen.extend(ids(page.threads))
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == list(reversed(created))
    ascending = store.list_threads(limit=100, sort_direction="asc")
    assert ids(ascending.threads) == created


def test_the_backwards_cursor_pages_back_to_the_rows_before_the_page(store: ThreadStore) -> None:
    created = [make_thread(store, f"t{i}").thread_id for i in range(7)]
    first = store.list_threads(limit=3)
    second = store.list_threads(limit=3, cursor=first.next_cursor)
    assert first.backwards_cursor is not None and second.backwards_cursor is not None
    # From the second page's first row, the opposite direction gives the first page's rows, nearest first.
    back = store.list_threads(limit=10, cursor=second.backwards_cursor, sort_direction="asc")
    assert ids(back.threads) == list(reversed(ids(first.threads))) == created[4:]
    nothing_before = store.list_threads(limit=10, cursor=first.backwards_cursor, sort_direction="asc")
    assert nothing_before.threads == []
    assert store.list_threads(limit=3, archived=True).backwards_cursor is None  # an empty page has none


def test_sorting_by_updated_at_puts_the_most_recently_active_thread_first(store: ThreadStore) -> None:
    first = make_thread(store, "one")
    second = make_thread(store, "two")
    assert ids(store.list_threads(sort_key="updated_at").threads)[0] == second.thread_id
    turn = new_uuid7()
    first.turn_started(turn)
    first.turn_ended(turn, "completed")
    assert ids(store.list_threads(sort_key="updated_at").threads)[0] == first.thread_id
    assert ids(store.list_threads(sort_key="created_at").threads)[0] == second.thread_id


def test_a_bad_cursor_or_sort_key_gets_a_specific_error(store: ThreadStore) -> None:
    for i in range(3):
        make_thread(store, f"t{i}")
    cursor = store.list_threads(limit=1).next_cursor
    assert cursor is not None
    with pytest.raises(InvalidCursorError, match="different sort key"):
        store.list_threads(limit=1, cursor=cursor, sort_key="updated_at")
    with pytest.raises(InvalidCursorError, match="invalid cursor"):
        store.list_threads(cursor="!!not-a-cursor!!")
    with pytest.raises(ValueError, match="unsupported sort key 'title'"):
        store.list_threads(sort_key="title")


def test_filters_narrow_the_list_by_cwd_provider_source_and_search_term(store: ThreadStore) -> None:
    a = make_thread(store, "Fix the Parser", cwd="/ws/a")
    b = make_thread(store, "write docs", cwd="/ws/b", modelProvider="openai")
    c = make_thread(store, "100% coverage", cwd="/ws/c")
    exec_thread = make_thread(store, "from exec", source="exec")
    assert ids(store.list_threads(cwd="/ws/b").threads) == [b.thread_id]
    assert set(ids(store.list_threads(cwd=["/ws/a", "/ws/c"]).threads)) == {a.thread_id, c.thread_id}
    assert ids(store.list_threads(model_providers=["openai"]).threads) == [b.thread_id]
    assert ids(store.list_threads(search_term="parser").threads) == [a.thread_id]
    assert ids(store.list_threads(search_term="0%").threads) == [c.thread_id]
    assert exec_thread.thread_id not in ids(store.list_threads().threads)
    assert ids(store.list_threads(source_kinds=["exec"]).threads) == [exec_thread.thread_id]
    assert ids(store.list_threads(excluded_ids=[c.thread_id, b.thread_id]).threads) == [a.thread_id]


def test_set_name_shows_in_list_and_load_and_can_be_searched(store: ThreadStore) -> None:
    writer = make_thread(store, "hello")
    before = store.list_threads().rows[0].updated_at_ms
    time.sleep(0.003)
    store.set_name(writer.thread_id, "Release plan")
    row = store.list_threads().rows[0]
    assert row.name == "Release plan" and row.updated_at_ms > before
    assert store.load_thread(writer.thread_id).name == "Release plan"
    assert ids(store.list_threads(search_term="release").threads) == [writer.thread_id]
    store.close_writer(writer.thread_id)
    store.set_name(writer.thread_id, "Renamed while unloaded")
    assert store.read_thread(writer.thread_id)["name"] == "Renamed while unloaded"


def test_archive_moves_the_rollout_and_unarchive_moves_it_back(store: ThreadStore) -> None:
    kept = make_thread(store, "kept")
    gone = make_thread(store, "gone")
    live_path = gone.path
    assert live_path is not None
    archived_path = store.archive(gone.thread_id)
    assert archived_path == store.codex_home / "archived_sessions" / live_path.name
    assert archived_path.exists() and not live_path.exists()
    assert gone.closed
    assert ids(store.list_threads().threads) == [kept.thread_id]
    archived = store.list_threads(archived=True).threads
    assert ids(archived) == [gone.thread_id] and archived[0]["path"] == str(archived_path)
    assert store.load_thread(gone.thread_id).archived
    with pytest.raises(ThreadArchivedStateError, match="already archived"):
        store.archive(gone.thread_id)

    thread = store.unarchive(gone.thread_id)
    assert thread["path"] == str(live_path) and live_path.exists()
    assert set(ids(store.list_threads().threads)) == {kept.thread_id, gone.thread_id}
    with pytest.raises(ThreadArchivedStateError, match="not archived"):
        store.unarchive(gone.thread_id)
    with pytest.raises(ThreadNotFoundError):
        store.archive(new_uuid7())


def test_a_missing_database_is_rebuilt_from_the_rollouts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ThreadStore(home, fsync=False) as store:
        first = make_thread(store, "first")
        second = make_thread(store, "second")
        store.set_name(first.thread_id, "named")
        store.archive(second.thread_id)
        expected_live = store.list_threads().threads
        expected_archived = store.list_threads(archived=True).threads
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home / 'state_pycodex.sqlite'}{suffix}").unlink(missing_ok=True)
    with ThreadStore(home, fsync=False) as store:
        assert store.list_threads().threads == expected_live
        assert store.list_threads(archived=True).threads == expected_archived


def test_a_corrupt_database_is_replaced_and_rebuilt(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ThreadStore(home, fsync=False) as store:
        writer = make_thread(store, "survives")
    db = home / "state_pycodex.sqlite"
    db.write_bytes(b"this is not an sqlite database" * 100)
    with ThreadStore(home, fsync=False) as store:
        page = store.list_threads()
        assert ids(page.threads) == [writer.thread_id] and page.threads[0]["preview"] == "survives"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_startup_indexes_rollouts_it_did_not_know_and_forgets_deleted_ones(tmp_path: Path) -> None:
    with ThreadStore(tmp_path / "other", fsync=False) as other:
        foreign = make_thread(other, "copied in")
    home = tmp_path / "home"
    with ThreadStore(home, fsync=False) as store:
        doomed = make_thread(store, "deleted later")
    assert foreign.path is not None and doomed.path is not None
    target = home / foreign.path.relative_to(tmp_path / "other")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(foreign.path, target)
    doomed.path.unlink()
    with ThreadStore(home, fsync=False) as store:
        assert ids(store.list_threads().threads) == [foreign.thread_id]
        assert store.list_threads().threads[0]["preview"] == "copied in"


def test_find_rollout_follows_a_file_moved_behind_the_index(store: ThreadStore) -> None:
    writer = make_thread(store, "moved")
    store.close_writer(writer.thread_id)
    assert writer.path is not None
    target = store.codex_home / "archived_sessions" / writer.path.name
    target.parent.mkdir(parents=True)
    writer.path.rename(target)
    assert store.find_rollout(writer.thread_id) == target
    assert ids(store.list_threads(archived=True).threads) == [writer.thread_id]
    assert store.find_rollout(new_uuid7()) is None
