"""apply_patch in a running turn: items, the model's output, the turn diff, sandbox refusals and approvals."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import exec_call, message, model_config, run_turn

OUTSIDE_REASON = "patch rejected: writing outside of the project; rejected by user approval settings"
READ_ONLY_REASON = "patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings"
SUCCESS = re.compile(r"\AExit code: 0\nWall time: \d+\.\d seconds\nOutput:\n")


def patch_call(call_id: str, patch: str) -> dict[str, Any]:
    """The model's freeform apply_patch call."""
    return {"type": "custom_tool_call", "name": "apply_patch", "call_id": call_id, "input": patch}


def patch_of(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch"


def outputs(model: Any) -> dict[str, str]:
    """call_id -> the tool output text (custom or function) the model was sent."""
    return {
        i["call_id"]: i["output"]
        for r in model.requests()
        for i in r["body"].get("input", [])
        if i.get("type") in ("custom_tool_call_output", "function_call_output")
    }


def file_items(client: Any, method: str) -> list[dict[str, Any]]:
    return [m["params"]["item"] for m in client.notifications(method) if m["params"]["item"]["type"] == "fileChange"]


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (where workspace-write refuses writes)."""
    path = Path("/var/tmp") / f"pycodex-patch-{uuid.uuid4().hex}"
    path.mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def _thread(client: Any, workspace: Path) -> str:
    thread_id: str = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    return thread_id


async def test_add_update_delete_and_move_apply_with_items_and_the_turn_diff(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "gone.txt").write_text("bye\n")
    (workspace / "m.txt").write_text("move me\n")
    first = patch_of("*** Add File: hello.txt\n+hello\n", "*** Update File: a.txt\n@@\n-one\n+uno\n two\n",
                     "*** Delete File: gone.txt\n")
    second = patch_of("*** Update File: m.txt\n*** Move to: sub/moved.txt\n@@\n-move me\n+moved\n")
    model = await fake_model([
        {"output": [patch_call("p1", first)]},
        {"output": [patch_call("p2", second)]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = await _thread(client, workspace)
    turn = await run_turn(client, thread_id, "edit")
    assert turn["status"] == "completed"
    assert (workspace / "hello.txt").read_text() == "hello\n"
    assert (workspace / "a.txt").read_text() == "uno\ntwo\n"
    assert not (workspace / "gone.txt").exists()
    assert not (workspace / "m.txt").exists() and (workspace / "sub/moved.txt").read_text() == "moved\n"

    out = outputs(model)
    assert SUCCESS.match(out["p1"]) and out["p1"].endswith(
        "Output:\nSuccess. Updated the following files:\nA hello.txt\nM a.txt\nD gone.txt\n")
    assert out["p2"].endswith("Output:\nSuccess. Updated the following files:\nM sub/moved.txt\n")

    started, completed = file_items(client, "item/started"), file_items(client, "item/completed")
    assert [i["id"] for i in started] == ["p1", "p2"] == [i["id"] for i in completed]
    assert [i["status"] for i in started] == ["inProgress", "inProgress"]
    assert [i["status"] for i in completed] == ["completed", "completed"]
    p1 = completed[0]
    assert [(c["path"], c["kind"]) for c in p1["changes"]] == [
        (str(workspace / "a.txt"), {"type": "update", "move_path": None}),
        (str(workspace / "gone.txt"), {"type": "delete"}),
        (str(workspace / "hello.txt"), {"type": "add"}),
    ]
    assert p1["changes"][2]["diff"] == "hello\n" and p1["changes"][1]["diff"] == "bye\n"
    assert "-one\n+uno\n" in p1["changes"][0]["diff"]
    assert completed[1]["changes"][0]["kind"] == {"type": "update", "move_path": str(workspace / "sub/moved.txt")}

    sent = [m["params"] for m in client.notifications("turn/diff/updated")]
    assert [d["turnId"] for d in sent] == [turn["id"]] * 5
    # Codex 0.169 sends the diff after each patch and again after each model response from the first patch
    # on (test_patch_turn_vs_codex.py); the second patch's diff aggregates the first's.
    assert sent[0] == sent[1] and sent[2] == sent[3] == sent[4]
    diffs = [sent[0], sent[2]]
    zero = "0" * 40
    old_a, new_a, bye, hello = _oid("one\ntwo\n"), _oid("uno\ntwo\n"), _oid("bye\n"), _oid("hello\n")
    assert diffs[0]["diff"] == (
        f"diff --git a/a.txt b/a.txt\nindex {old_a}..{new_a}\n"
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+uno\n two\n"
        f"diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\nindex {bye}..{zero}\n"
        "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        f"diff --git a/hello.txt b/hello.txt\nnew file mode 100644\nindex {zero}..{hello}\n"
        "--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello\n"
    )
    # The turn's diff aggregates: the moved file shows as one rename diff from where it started.
    moved_old, moved_new = _oid("move me\n"), _oid("moved\n")
    assert diffs[1]["diff"] == diffs[0]["diff"] + (
        f"diff --git a/m.txt b/sub/moved.txt\nindex {moved_old}..{moved_new}\n"
        "--- a/m.txt\n+++ b/sub/moved.txt\n@@ -1 +1 @@\n-move me\n+moved\n"
    )


def _oid(text: str) -> str:
    from app_server.tools.turn_diff import git_blob_oid

    return git_blob_oid(text)


async def test_a_malformed_patch_tells_the_model_codex_s_text_and_starts_no_item(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([
        {"output": [patch_call("bad", "*** Begin Patch\nfoo\n*** End Patch")]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url)
    client = await app_server()
    turn = await run_turn(client, await _thread(client, workspace), "edit")
    assert turn["status"] == "completed"
    # Codex 0.169 answers at verification, before any fileChange item exists.
    assert outputs(model)["bad"] == (
        "apply_patch verification failed: invalid hunk at line 2, 'foo' is not a valid hunk header. "
        "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    )
    assert file_items(client, "item/started") == [] and client.notifications("turn/diff/updated") == []


async def test_the_function_form_takes_its_patch_from_input(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    call = {"type": "function_call", "name": "apply_patch", "call_id": "fn",
            "arguments": json.dumps({"input": patch_of("*** Add File: f.txt\n+f\n")})}
    model = await fake_model([{"output": [call]}, {"output": [message("done")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    await run_turn(client, await _thread(client, workspace), "edit")
    assert (workspace / "f.txt").read_text() == "f\n"
    assert outputs(model)["fn"].endswith("Success. Updated the following files:\nA f.txt\n")
    answer = next(i for r in model.requests() for i in r["body"]["input"] if i.get("call_id") == "fn"
                  and i["type"].endswith("output"))
    assert answer["type"] == "function_call_output"


async def test_workspace_write_refuses_a_patch_outside_the_roots_and_into_git(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    model = await fake_model([
        {"output": [patch_call("out", patch_of(f"*** Add File: {outside_dir}/x.txt\n+x\n")),
                    patch_call("git", patch_of("*** Add File: .git/x.txt\n+x\n"))]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url, approval_policy="never")
    client = await app_server()
    await run_turn(client, await _thread(client, workspace), "edit")
    assert outputs(model) == {"out": OUTSIDE_REASON, "git": OUTSIDE_REASON}
    assert not (outside_dir / "x.txt").exists() and not (workspace / ".git").exists()
    assert file_items(client, "item/started") == []


async def test_read_only_refuses_every_write(app_server, fake_model, codex_home: Path, workspace: Path) -> None:
    model = await fake_model([
        {"output": [patch_call("ro", patch_of("*** Add File: x.txt\n+x\n"))]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url, approval_policy="never", sandbox_mode="read-only")
    client = await app_server()
    await run_turn(client, await _thread(client, workspace), "edit")
    assert outputs(model) == {"ro": READ_ONLY_REASON}
    assert not (workspace / "x.txt").exists()


async def test_the_shell_intercepted_heredoc_runs_as_a_patch(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    cmd = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: s.txt\n+s\n*** End Patch\nEOF\n"
    model = await fake_model([{"output": [exec_call("sh", cmd)]}, {"output": [message("done")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    await run_turn(client, await _thread(client, workspace), "edit")
    assert (workspace / "s.txt").read_text() == "s\n"
    out = outputs(model)["sh"]
    assert re.fullmatch(r"Wall time: 0\.0000 seconds\nOutput:\nExit code: 0\nWall time: \d+\.\d seconds\n"
                        r"Output:\nSuccess\. Updated the following files:\nA s\.txt\n", out), out
    assert [i["status"] for i in file_items(client, "item/completed")] == ["completed"]
    kinds = {m["params"]["item"]["type"] for m in client.notifications("item/started")}
    assert "commandExecution" not in kinds
