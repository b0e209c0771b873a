"""One CODEX_HOME shared by pycodex and the real Codex 0.169, both ways (the drop-in case).

The writer runs a plain turn and a command turn and names the thread, then exits. The reader lists it (the
same row both programs list), resumes it, gets every item from thread/items/list, and runs a turn whose model
request carries the whole history. The writer then resumes the thread again and sees its own turns and the
reader's. A thread one program has loaded is refused by the other with Codex's "active writer" error, and
its rollout is not touched.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.errors import as_codex
from tests.support.fake_model import exec_call, message, model_config, run_turn
from tests.support.tools import require_codex

pytestmark = pytest.mark.codex

PYCODEX = [sys.executable, "-m", "pycodex", "app-server"]
# Fields that differ between two reads of the same stored thread for reasons that are not about storage:
# the live status and environments of the loaded thread, and the times a new turn moves on.
VOLATILE = {"status", "environments", "updatedAt", "recencyAt"}


def _argv(program: str) -> list[str]:
    return [str(require_codex()), "app-server"] if program == "codex" else PYCODEX


def _items(thread: dict[str, Any]) -> list[tuple[str, str]]:
    return [(i["type"], i["id"]) for turn in thread["turns"] for i in turn["items"]]


def _row(thread: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in thread.items() if k not in VOLATILE}


@pytest.mark.parametrize(("writer", "reader"), [("pycodex", "codex"), ("codex", "pycodex")])
async def test_each_resumes_the_others_thread_with_its_whole_history(
    writer: str, reader: str, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([[message("hello there")], [exec_call("call_exec", "echo hi")], [message("ran it")],
                              [message("the reader answers")]])  # fmt: skip
    model_config(codex_home, model.url)
    # A user who switches has run Codex on this CODEX_HOME before: its own index (state_5.sqlite) exists, and
    # Codex takes thread names from there only (a home Codex never saw gets them on pycodex's next start).
    await (await app_server(argv=_argv("codex"))).close()
    first = await app_server(argv=_argv(writer), experimental=True)
    thread_id = (await first.call("thread/start", {"cwd": str(workspace)}, timeout=60))["thread"]["id"]
    await run_turn(first, thread_id, "say hello", timeout=60)
    await run_turn(first, thread_id, "run echo", timeout=60)
    await first.call("thread/name/set", {"threadId": thread_id, "name": "shared thread"})
    written = (await first.call("thread/read", {"threadId": thread_id, "includeTurns": True}))["thread"]
    assert [t for t, _ in _items(written)] == ["userMessage", "agentMessage", "userMessage", "commandExecution",
                                               "agentMessage"]  # fmt: skip
    await first.close()

    second = await app_server(argv=_argv(reader), experimental=True)
    (listed,) = (await second.call("thread/list", {}))["data"]
    assert (listed["id"], listed["preview"], listed["name"]) == (thread_id, "say hello", "shared thread")
    resumed = await second.call("thread/resume", {"threadId": thread_id}, timeout=60)
    assert resumed["thread"]["preview"] == "say hello" and resumed["thread"]["cliVersion"] == "0.169.0"
    page = await second.call("thread/items/list", {"threadId": thread_id})
    assert [(e["item"]["type"], e["item"]["id"]) for e in page["data"]] == _items(written)
    for entry, item in zip(page["data"], [i for t in written["turns"] for i in t["items"]], strict=True):
        assert entry["item"] == item, item["type"]  # every item as the writer itself served it
    await run_turn(second, thread_id, "and now?", timeout=60)
    sent = json.dumps(model.requests()[-1]["body"]["input"])
    for text in ("say hello", "hello there", "run echo", "echo hi", "ran it", "and now?"):
        assert text in sent, text
    (reader_row,) = (await second.call("thread/list", {}))["data"]
    await second.close()

    again = await app_server(argv=_argv(writer), experimental=True)
    (writer_row,) = (await again.call("thread/list", {}))["data"]
    assert _row(writer_row) == _row(reader_row)
    await again.call("thread/resume", {"threadId": thread_id}, timeout=60)
    final = (await again.call("thread/read", {"threadId": thread_id, "includeTurns": True}))["thread"]
    assert _items(final)[: len(_items(written))] == _items(written)
    assert [t for t, _ in _items(final)[len(_items(written)):]] == ["userMessage", "agentMessage"]
    assert final["turns"][-1]["items"][-1]["text"] == "the reader answers"


@pytest.mark.parametrize(("holder", "other"), [("pycodex", "codex"), ("codex", "pycodex")])
async def test_a_thread_open_in_one_program_is_refused_by_the_other(
    holder: str, other: str, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([[message("hello there")]])
    model_config(codex_home, model.url)
    owner = await app_server(argv=_argv(holder), experimental=True)
    thread_id = (await owner.call("thread/start", {"cwd": str(workspace)}, timeout=60))["thread"]["id"]
    await run_turn(owner, thread_id, "say hello", timeout=60)
    (rollout,) = (codex_home / "sessions").rglob(f"rollout-*{thread_id}.jsonl")
    before = rollout.read_bytes()

    intruder = await app_server(argv=_argv(other), experimental=True)
    answer = await intruder.request("thread/resume", {"threadId": thread_id}, timeout=60)
    expect = as_codex if other == "codex" else (lambda error: error)  # Codex sends no error codes
    locked = {"code": -32600, "data": {"appErrorCode": "thread_locked", "threadId": thread_id},
              "message": f"thread {thread_id} already has an active writer"}
    assert answer["error"] == expect(locked)
    assert rollout.read_bytes() == before
    await intruder.close()
    await owner.close()


async def test_a_revert_in_pycodex_drops_the_turns_in_codex_too(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([[message("first answer")], [message("second answer")]])
    model_config(codex_home, model.url)
    await (await app_server(argv=_argv("codex"))).close()  # a home Codex has used
    ours = await app_server(argv=PYCODEX, experimental=True)
    thread_id = (await ours.call("thread/start", {"cwd": str(workspace)}, timeout=60))["thread"]["id"]
    await run_turn(ours, thread_id, "first", timeout=60)
    second = await run_turn(ours, thread_id, "second", timeout=60)
    await ours.call("thread/revert", {"threadId": thread_id, "beforeTurnId": second["id"]})
    kept = (await ours.call("thread/read", {"threadId": thread_id, "includeTurns": True}))["thread"]
    await ours.close()
    assert len(kept["turns"]) == 1

    codex = await app_server(argv=_argv("codex"), experimental=True)
    read = (await codex.call("thread/read", {"threadId": thread_id, "includeTurns": True}))["thread"]
    assert [t["id"] for t in read["turns"]] == [t["id"] for t in kept["turns"]]
    await codex.call("thread/resume", {"threadId": thread_id}, timeout=60)  # Codex's own replay of the rollout
    resumed = (await codex.call("thread/read", {"threadId": thread_id, "includeTurns": True}))["thread"]
    assert [t["id"] for t in resumed["turns"]] == [t["id"] for t in kept["turns"]]
    await codex.close()
