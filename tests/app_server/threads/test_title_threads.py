"""Thread titles are the client's, as with Codex: the TUI (0.169 and 0.171) runs an ephemeral title thread with a
structured turn and names the thread with `thread/name/set`; the app-server never asks the model for a title
itself (Codex 0.171's app-server, driven without a TUI, sends one model request per turn and leaves the name null).

The 0.171 TUI starts its title thread with `permissions: ":read-only"` and no `sandbox` (0.169 sends
`sandbox: "read-only"`), and gives up unless the answer's sandbox is read-only: it then names the thread after the
first prompt. These are the params it sends (from a trace of the 0.171 TUI against pycodex), less the ~30
`features.*` overrides that only switch tools off. The tests hold for Codex's app-server too
(PYCODEX_TEST_TARGET=codex, with PYCODEX_CODEX_BIN naming a 0.169 or a 0.171 binary).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import message, model_config, run_turn

TITLE_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["title"],
                "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 36}}}


def _title_thread(workspace: Path, **sandbox: Any) -> dict[str, Any]:
    return {"model": "mock-model", "modelProvider": "mock_provider", "cwd": str(workspace), "runtimeWorkspaceRoots": [],
            "approvalPolicy": "never", "ephemeral": True, "threadSource": "thread_title", "environments": [],
            "dynamicTools": [], "config": {"features.shell_tool": False, "web_search": "disabled", "mcp_servers": {}},
            **sandbox}


@pytest.mark.parametrize(("version", "sandbox", "profile"), [
    ("0.171.0", {"permissions": ":read-only"}, {"id": ":read-only", "extends": None}),
    ("0.169.0", {"sandbox": "read-only"}, None),
])
async def test_the_tuis_title_thread_starts_read_only_and_answers_its_structured_turn(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
    version: str, sandbox: dict[str, str], profile: dict[str, Any] | None,
) -> None:
    model = await fake_model([{"output": [message('{"title":"Fix the parser"}')]}])
    model_config(codex_home, model.url)  # the configured sandbox is workspace-write: the request must narrow it
    client = await app_server(initialize=False)
    await client.initialize(name="codex-tui", version=version, experimental=True)
    started = await client.call("thread/start", _title_thread(workspace, **sandbox))
    assert started["sandbox"]["type"] == "readOnly", started["sandbox"]  # what the TUI checks before going on
    assert started["activePermissionProfile"] == profile
    assert started["thread"]["ephemeral"] is True and started["thread"]["environments"] == []

    turn = await run_turn(client, started["thread"]["id"], "Generate a title for: fix the parser",
                          outputSchema=TITLE_SCHEMA)
    assert turn["status"] == "completed", turn
    agent = [i for i in turn["items"] if i["type"] == "agentMessage"]
    assert [i["text"] for i in agent] == ['{"title":"Fix the parser"}']
    (request,) = model.requests()
    assert request["body"]["text"]["format"]["schema"] == TITLE_SCHEMA
    names = {t.get("name") for t in request["body"].get("tools", [])}  # Codex keeps tools whose features are on
    assert not names & {"exec_command", "write_stdin", "shell"}, names


async def test_the_server_asks_no_title_of_its_own_and_stores_the_name_the_client_sets(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("first answer")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(initialize=False)
    await client.initialize(name="codex-tui", version="0.171.0", experimental=True)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, tid, "fix the parser in src/parse.py")
    assert len(model.requests()) == 1, [r["body"].get("text") for r in model.requests()]
    assert client.notifications("thread/name/updated") == []
    assert (await client.call("thread/read", {"threadId": tid}))["thread"]["name"] is None

    await client.call("thread/name/set", {"threadId": tid, "name": "Fix the parser"})
    (note,) = client.notifications("thread/name/updated")
    assert note["params"] == {"threadId": tid, "threadName": "Fix the parser"}
    listed = await client.call("thread/list", {})
    assert [(t["id"], t["name"]) for t in listed["data"]] == [(tid, "Fix the parser")]
    assert len(model.requests()) == 1  # naming the thread asks the model nothing either
