"""A damaged rollout gets a descriptive error, never a generic "internal error", and nothing is written.

Codex 0.169 answers an empty rollout, or one whose first line is not session metadata, with -32603
"failed to read thread: ..." on thread/read, resume and fork, skips a damaged line further down, and keeps
listing and serving every other thread. pycodex keeps the code and names the thread, the file, the line and
the cause. Every case compares the bytes of the whole sessions tree before and after.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from app_server.store import RolloutCorruptError, ThreadStore, new_uuid7
from tests.support import AppServerClient, write_codex_config
from tests.support.fake_model import message, model_config, run_turn

DEAD_URL = "http://127.0.0.1:9/v1"
Start = Callable[..., Awaitable[AppServerClient]]


def make_thread(store: ThreadStore, text: str) -> tuple[str, Path]:
    writer = store.create_thread({"cwd": "/ws", "modelProvider": "mock_provider", "model": "mock-model",
                                  "source": "vscode", "cliVersion": "0.169.0", "originator": "pycodex_tests"})
    turn = new_uuid7()
    writer.turn_started(turn)
    user = {"type": "text", "text": text, "text_elements": []}
    writer.item_completed(turn, {"type": "userMessage", "id": new_uuid7(), "content": [user]})
    writer.item_completed(turn, {"type": "agentMessage", "id": new_uuid7(), "text": "done"})
    writer.turn_ended(turn, "completed")
    assert writer.path is not None
    return writer.thread_id, writer.path


def snapshot(home: Path) -> dict[str, bytes]:
    """Every file under sessions/ and archived_sessions/ with its bytes."""
    return {
        str(p.relative_to(home)): p.read_bytes()
        for top in ("sessions", "archived_sessions")
        for p in sorted((home / top).rglob("*"))
        if p.is_file()
    }


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


# (name, how to damage the rollout bytes, line named in the error or None, cause text)
DAMAGE: list[tuple[str, Callable[[bytes], bytes], int | None, str]] = [
    ("empty file", lambda d: b"", None, "the file is empty"),
    ("only blank lines", lambda d: b"\n\n", None, "the file is empty"),
    ("first line is not JSON", lambda d: b"{not json\n" + d.partition(b"\n")[2], 1, "not valid JSON"),
    ("first line cut off", lambda d: d[:40], 1, "the session_meta record is incomplete"),
    ("first line is not UTF-8", lambda d: b'{"x":"\xff"}\n' + d, 1, "not valid UTF-8"),
    ("first line is another record type", lambda d: d.partition(b"\n")[2], 1, "a `event_msg` record"),
    (
        "session_meta without an id",
        lambda d: json.dumps({"timestamp": "", "ordinal": 0, "type": "session_meta", "payload": {}}).encode()
        + b"\n" + d.partition(b"\n")[2],
        1,
        "the session_meta record has no thread id",
    ),
    ("first line is a JSON array", lambda d: b"[1,2]\n" + d.partition(b"\n")[2], 1, "not a rollout record"),
]


@pytest.fixture
def home_with_threads(tmp_path: Path) -> tuple[Path, str, Path, str]:
    home = tmp_path / "home"
    write_codex_config(home, base_url=DEAD_URL)
    with ThreadStore(home, fsync=False) as store:
        victim, path = make_thread(store, "victim")
        other, _ = make_thread(store, "other")
    return home, victim, path, other


@pytest.mark.parametrize(("name", "damage", "line", "cause"), DAMAGE, ids=[d[0] for d in DAMAGE])
async def test_a_damaged_rollout_is_named_in_the_error_and_left_untouched(
    app_server: Start, home_with_threads: tuple[Path, str, Path, str],
    name: str, damage: Callable[[bytes], bytes], line: int | None, cause: str,
) -> None:
    home, victim, path, other = home_with_threads
    path.write_bytes(damage(path.read_bytes()))
    before = snapshot(home)
    client = await app_server(codex_home=home)

    where = f"{path}:{line}" if line is not None else str(path)
    prefix = f"failed to read thread: rollout of thread {victim} is unreadable: {where}: {cause}"
    requests = [
        ("thread/read", {"threadId": victim, "includeTurns": True}),
        ("thread/read", {"threadId": victim}),
        ("thread/resume", {"threadId": victim}),
        ("thread/fork", {"threadId": victim}),
        ("thread/turns/list", {"threadId": victim}),
        ("thread/name/set", {"threadId": victim, "name": "renamed"}),
    ]
    for method, params in requests:
        error = (await client.request(method, params))["error"]
        assert error["code"] == -32603, (method, error)
        assert error["message"].startswith(prefix), (method, error)
        assert "\n" not in error["message"]

    # Still serving: the other thread reads, resumes and lists; nothing was loaded or written.
    assert (await client.call("thread/read", {"threadId": other}))["thread"]["preview"] == "other"
    assert other in [t["id"] for t in (await client.call("thread/list", {}))["data"]]
    assert (await client.call("thread/loaded/list", {}))["data"] == []
    assert snapshot(home) == before
    assert (await client.call("thread/resume", {"threadId": other}))["thread"]["id"] == other
    assert "Traceback" not in client.stderr_text
    assert f"rollout of thread {victim} is unreadable" in client.stderr_text


async def test_a_damaged_line_after_the_first_is_skipped_as_codex_does(
    app_server: Start, home_with_threads: tuple[Path, str, Path, str]
) -> None:
    home, victim, path, _other = home_with_threads
    lines = _lines(path.read_bytes())
    path.write_bytes(b"\n".join([*lines[:2], b"{garbage", *lines[2:]]))
    before = snapshot(home)
    client = await app_server(codex_home=home)
    thread = (await client.call("thread/read", {"threadId": victim, "includeTurns": True}))["thread"]
    assert [t["status"] for t in thread["turns"]] == ["completed"]
    assert snapshot(home) == before
    assert f"skipping damaged rollout line 3 in {path}" in client.stderr_text


def test_the_store_raises_a_typed_error_and_reads_nothing_else(tmp_path: Path) -> None:
    with ThreadStore(tmp_path, fsync=False) as store:
        victim, path = make_thread(store, "victim")
        store.close_writer(victim)
        path.write_bytes(b"")
        for call in (store.load_thread, store.open_writer, lambda t: store.set_name(t, "x"),
                     lambda t: store.fork_thread(t)):
            with pytest.raises(RolloutCorruptError) as caught:
                call(victim)
            assert caught.value.thread_id == victim and caught.value.path == str(path)
        assert path.read_bytes() == b""
        assert len(list((tmp_path / "sessions").rglob("*.jsonl"))) == 1  # the failed fork left no file


def test_a_rollout_whose_session_meta_names_another_thread_is_refused(tmp_path: Path) -> None:
    with ThreadStore(tmp_path, fsync=False) as store:
        victim, path = make_thread(store, "victim")
        other, other_path = make_thread(store, "other")
        store.close_writer(victim)
        path.write_bytes(other_path.read_bytes())
        with pytest.raises(RolloutCorruptError, match=f"its session_meta record names thread {other}"):
            store.load_thread(victim)


@pytest.mark.codex
@pytest.mark.parametrize("damage", ["empty", "first line"])
async def test_codex_answers_a_damaged_rollout_with_the_same_code(
    app_server: Start, codex_bin: Path, fake_model: Callable[..., Awaitable[Any]], tmp_path: Path, damage: str
) -> None:
    """Codex's own rollout format, damaged the same ways: -32603 "failed to read thread: ..." naming the file,
    the file left as it was, the other thread still listed and readable."""
    model = await fake_model({"responses": [{"output": [message("hi")]}], "when_exhausted": "repeat_last"})
    home = tmp_path / "home"
    model_config(home, model.url)
    argv = [str(codex_bin), "app-server"]
    client = await app_server(argv=argv, codex_home=home)
    ids = []
    for text in ("victim", "other"):
        thread_id = (await client.call("thread/start", {}))["thread"]["id"]
        await run_turn(client, thread_id, text)
        ids.append(thread_id)
    await client.close()
    victim, other = ids
    path = next((home / "sessions").rglob(f"*{victim}.jsonl"))
    data = path.read_bytes()
    path.write_bytes(b"" if damage == "empty" else b"{not json\n" + data.partition(b"\n")[2])
    before = snapshot(home)

    fresh = await app_server(argv=argv, codex_home=home)
    for method in ("thread/read", "thread/resume", "thread/fork"):
        error = (await fresh.request(method, {"threadId": victim}))["error"]
        assert error["code"] == -32603, (method, error)
        assert error["message"].startswith("failed to read thread: ") and str(path) in error["message"]
    assert other in [t["id"] for t in (await fresh.call("thread/list", {}))["data"]]
    assert (await fresh.call("thread/read", {"threadId": other}))["thread"]["id"] == other
    assert snapshot(home) == before
