"""exec_command and write_stdin end to end: sessions, truncation, exit codes and the filesystem sandbox."""

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
from tests.support.tools import require_landlock


def _write_stdin(call_id: str, session_id: int, chars: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "name": "write_stdin",
        "call_id": call_id,
        "arguments": json.dumps({"session_id": session_id, "chars": chars, **extra}),
    }




def _outputs(model: Any) -> dict[str, str]:
    """call_id -> the function_call_output text the model was sent (from every logged request)."""
    out: dict[str, str] = {}
    for request in model.requests():
        for item in request["body"].get("input", []):
            if item.get("type") == "function_call_output":
                out[item["call_id"]] = item["output"]
    return out


def _completed_items(client: Any) -> dict[str, dict[str, Any]]:
    return {m["params"]["item"]["id"]: m["params"]["item"] for m in client.notifications("item/completed")}


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (where workspace-write must refuse writes)."""
    path = Path("/var/tmp") / f"pycodex-test-{uuid.uuid4().hex}"
    path.mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_a_long_command_yields_a_session_that_write_stdin_continues(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {
                "output": [
                    exec_call(
                        "call_read", "echo waiting; read line; echo got:$line", yield_time_ms=300, tty=True
                    )
                ]
            },
            {"output": [_write_stdin("call_write", 1, "hello\n", yield_time_ms=2000)]},
            {"output": [message("finished")]},
        ]
    )
    model_config(codex_home, model.url, sandbox_mode="danger-full-access")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    final = await run_turn(client, thread_id, "talk to a process", timeout=20)
    assert final["status"] == "completed"
    outputs = _outputs(model)
    first = outputs["call_read"]
    session = re.search(r"Process running with session ID (\d+)", first)
    assert session is not None and "waiting" in first and "got:" not in first
    wall = float(re.search(r"Wall time: ([0-9.]+) seconds", first).group(1))  # type: ignore[union-attr]
    assert wall < 5  # returned at yield_time_ms, not at the 10 s default
    if session.group(1) != "1":
        pytest.skip(f"the scripted write_stdin names session 1; this server numbered it {session.group(1)}")
    second = outputs["call_write"]
    assert "Process exited with code 0" in second and "got:hello" in second
    assert first.startswith("Chunk ID: ") and second.startswith("Chunk ID: ")


async def test_write_stdin_to_an_unknown_session_tells_the_model(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [_write_stdin("call_bad", 4242, "x")]},
            {"output": [message("ok")]},
        ]
    )
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert (await run_turn(client, thread_id, "poke", timeout=20))["status"] == "completed"
    output = _outputs(model)["call_bad"]
    assert "4242" in output


async def test_truncation_exit_codes_and_failed_status(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {
                "output": [
                    exec_call("call_long", "seq 1 3000", max_output_tokens=40),
                    exec_call("call_fail", "echo oops; exit 3"),
                ]
            },
            {"output": [message("done")]},
        ]
    )
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert (await run_turn(client, thread_id, "run them", timeout=20))["status"] == "completed"
    outputs = _outputs(model)
    long_out = outputs["call_long"]
    count = int(re.search(r"Original token count: (\d+)", long_out).group(1))  # type: ignore[union-attr]
    assert count > 3000
    body = long_out.split("Output:\n", 1)[1]
    header = f"Warning: truncated output (original token count: {count})\nTotal output lines: "
    assert body.startswith(header), body[:200]
    assert len(body) < 400
    cut = re.search(r"…(\d+) tokens truncated…", body)
    assert cut is not None and count - 60 < int(cut.group(1)) < count
    assert "\n1\n2\n3\n" in body and body.endswith("2999\n3000\n")
    assert "Process exited with code 3" in outputs["call_fail"] and "oops" in outputs["call_fail"]
    items = _completed_items(client)
    assert items["call_fail"]["status"] == "failed" and items["call_fail"]["exitCode"] == 3
    assert items["call_long"]["status"] == "completed" and items["call_long"]["exitCode"] == 0
    # The item keeps the whole output; only the model's copy is truncated.
    assert (
        "3000" in items["call_long"]["aggregatedOutput"]
        and "1500\n" in items["call_long"]["aggregatedOutput"]
    )


async def test_the_sandbox_mode_decides_where_commands_may_write(
    app_server, app_server_argv, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    if app_server_argv is None:
        require_landlock()
    tmp_target = Path("/tmp") / f"pycodex-sandbox-{uuid.uuid4().hex}"
    script = []
    for mode in ("read-only", "workspace-write", "danger-full-access"):
        cmd = (
            f"printf a > {mode}-cwd.txt; echo cwd=$?; printf b > {tmp_target}-{mode}; echo tmp=$?; "
            f"printf c > {outside_dir}/{mode}.txt; echo out=$?"
        )
        script += [{"output": [exec_call(f"call_{mode}", cmd)]}, {"output": [message(f"{mode} done")]}]
    model = await fake_model(script)
    model_config(codex_home, model.url, approval_policy="never")
    client = await app_server()
    try:
        results = {}
        for mode in ("read-only", "workspace-write", "danger-full-access"):
            thread_id = (await client.call("thread/start", {"cwd": str(workspace), "sandbox": mode}))[
                "thread"
            ]["id"]
            assert (await run_turn(client, thread_id, f"write as {mode}", timeout=20))["status"] == "completed"
            results[mode] = _outputs(model)[f"call_{mode}"]
        ro, ww, full = results["read-only"], results["workspace-write"], results["danger-full-access"]
        assert "cwd=1" in ro and "tmp=1" in ro and "out=1" in ro
        assert not (workspace / "read-only-cwd.txt").exists() and not (outside_dir / "read-only.txt").exists()
        assert "cwd=0" in ww and "tmp=0" in ww and "out=1" in ww
        assert (workspace / "workspace-write-cwd.txt").read_text() == "a"
        assert not (outside_dir / "workspace-write.txt").exists()
        assert "cwd=0" in full and "tmp=0" in full and "out=0" in full
        assert (outside_dir / "danger-full-access.txt").read_text() == "c"
    finally:
        for mode in ("read-only", "workspace-write", "danger-full-access"):
            Path(f"{tmp_target}-{mode}").unlink(missing_ok=True)


async def test_a_command_that_outlives_its_yield_completes_its_item_when_it_exits(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [exec_call("call_bg", "echo early; sleep 0.6; echo late", yield_time_ms=250)]},
            {"output": [message("msg")], "delay_ms": 300},
        ]
    )
    model_config(codex_home, model.url, sandbox_mode="danger-full-access")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    final = await run_turn(client, thread_id, "background it", timeout=20)
    assert final["status"] == "completed"
    assert "Process running with session ID" in _outputs(model)["call_bg"]
    notes = [m for m in client.notifications() if m["method"].startswith("item/")]
    about = [
        (m["method"], m["params"])
        for m in notes
        if (m["params"].get("item") or {}).get("id") == "call_bg" or m["params"].get("itemId") == "call_bg"
    ]
    assert [a[0] for a in about] == [
        "item/started",
        "item/commandExecution/outputDelta",
        "item/commandExecution/outputDelta",
        "item/completed",
    ]
    assert about[1][1]["delta"] == "early\n" and about[2][1]["delta"] == "late\n"
    item = about[3][1]["item"]
    assert item["status"] == "completed" and item["exitCode"] == 0
    assert item["aggregatedOutput"] == "early\nlate\n" and item["durationMs"] >= 500
    read = await client.call("thread/read", {"threadId": thread_id, "includeTurns": True})
    assert [i["type"] for i in read["thread"]["turns"][0]["items"]] == [
        "userMessage",
        "commandExecution",
        "agentMessage",
    ]


async def test_an_interrupted_command_runs_on_and_the_model_is_told_it_was_aborted(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [exec_call("call_int", "echo begin; sleep 0.8; echo end > end.txt")]},
            {"output": [message("second turn")]},
        ]
    )
    model_config(codex_home, model.url, sandbox_mode="danger-full-access")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = (
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "x"}]})
    )["turn"]
    await client.wait_notification("item/commandExecution/outputDelta", timeout=10)
    await client.call("turn/interrupt", {"threadId": thread_id, "turnId": turn["id"]})
    done = await client.wait_notification("turn/completed", timeout=10)
    assert done["params"]["turn"]["status"] == "interrupted"
    completed = await client.wait_notification(
        "item/completed", lambda p: p["item"]["id"] == "call_int", timeout=10
    )
    assert completed["params"]["item"]["exitCode"] == 0 and completed["params"]["turnId"] == turn["id"]
    assert (workspace / "end.txt").read_text() == "end\n"
    second = (
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "y"}]})
    )["turn"]
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == second["id"], timeout=10)
    output = _outputs(model)["call_int"]
    assert re.fullmatch(r"Wall time: [0-9.]+ seconds\naborted by user", output), output
