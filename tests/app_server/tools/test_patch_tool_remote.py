"""apply_patch on a thread whose environment is a remote exec-server: the files change through it."""

from __future__ import annotations

from pathlib import Path

from tests.app_server.tools.test_patch_tool import file_items, outputs, patch_call, patch_of
from tests.support.execserver import run_ws_server
from tests.support.fake_model import message, model_config, run_turn


async def test_a_patch_applies_through_the_exec_server(
    app_server, fake_model, codex_home: Path, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    model = await fake_model([
        {"output": [patch_call("p", patch_of("*** Update File: a.txt\n@@\n-one\n+uno\n",
                                             "*** Add File: new/b.txt\n+b\n"))]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url)
    (tmp_path / "server").mkdir()
    with run_ws_server("pycodex", tmp_path / "server") as server:
        client = await app_server(env={"CODEX_EXEC_SERVER_URL": server.url})
        thread = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]
        assert thread["environments"][0]["environmentId"] == "remote"
        turn = await run_turn(client, thread["id"], "edit", timeout=30)
    assert turn["status"] == "completed"
    assert (workspace / "a.txt").read_text() == "uno\n" and (workspace / "new/b.txt").read_text() == "b\n"
    assert outputs(model)["p"].endswith("Success. Updated the following files:\nA new/b.txt\nM a.txt\n")
    assert [i["status"] for i in file_items(client, "item/completed")] == ["completed"]
