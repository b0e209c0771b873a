"""Read states as Codex 0.169 hands them out, where the TUI meets them:

* a thread with no turn yet (the TUI reads its fresh thread at startup) and an ephemeral thread (its title threads)
  have none (`readState: null`), so a thread's first finished turn is where it becomes unread;
* a fork starts read: `thread/read` and `thread/list` give it `firstUnread: null` whether its source was unread or
  read, so the /resume picker shows no unread mark (●) on a fork the user just made. Its own next turn makes it
  unread again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn


async def _started(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path) -> tuple[Any, str]:
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(codex_home=codex_home, experimental=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, "hello")
    return client, thread_id


async def _read_state(client: Any, thread_id: str) -> Any:
    return (await client.call("thread/read", {"threadId": thread_id}))["readState"]


async def test_a_fork_of_an_unread_thread_starts_read(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, source = await _started(app_server, fake_model, codex_home, workspace)
    assert (await _read_state(client, source))["firstUnread"]["type"] == "turn"  # the source stays unread

    fork = (await client.call("thread/fork", {"threadId": source}))["thread"]["id"]
    assert (await _read_state(client, fork))["firstUnread"] is None
    listed = (await client.call("thread/list", {}))["readStates"]
    assert listed[fork]["firstUnread"] is None
    assert listed[source]["firstUnread"]["type"] == "turn"

    turn = await run_turn(client, fork, "again")  # the fork's own turn is news again
    assert (await _read_state(client, fork))["firstUnread"] == {"type": "turn", "turnId": turn["id"]}


async def test_a_fork_of_a_read_thread_starts_read(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, source = await _started(app_server, fake_model, codex_home, workspace)
    revision = (await _read_state(client, source))["revision"]
    await client.call("thread/readState/update",
                      {"threadId": source, "expectedRevision": revision, "operation": {"type": "read"}})

    fork = (await client.call("thread/fork", {"threadId": source}))["thread"]["id"]
    listed = (await client.call("thread/list", {}))["readStates"]
    assert listed[fork]["firstUnread"] is None, listed  # it was {"type": "threadStart"} before the fix
    assert listed[source]["firstUnread"] is None


async def test_a_thread_has_no_read_state_before_its_first_turn(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(codex_home=codex_home, experimental=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert await _read_state(client, thread_id) is None
    turn = await run_turn(client, thread_id, "hello")
    changed = client.notifications("thread/readState/changed")[-1]["params"]["readState"]
    assert changed["firstUnread"] == {"type": "turn", "turnId": turn["id"]}  # was {"type": "threadStart"}
    assert await _read_state(client, thread_id) == changed

    ephemeral = (await client.call("thread/start", {"cwd": str(workspace), "ephemeral": True}))["thread"]["id"]
    await run_turn(client, ephemeral, "hello")
    assert await _read_state(client, ephemeral) is None
