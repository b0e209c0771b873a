"""The standard client scenario over stdio against each app-server build, executing locally.

initialize, thread/start, turn/start; the model asks for a command that needs approval
(``sandbox_permissions: require_escalated``), the client approves it, the command runs (exit 0, its
output on the commandExecution item and in the function_call_output the model gets: support/causes.py),
and the turn completes with a well-formed commandExecution item. Pairs are (app, app): one build alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import Build
from compat_tests.support.causes import Expected
from compat_tests.support.processes import ProcessGroup
from compat_tests.support.rpc import AppServerRpc, ScenarioError, check_item_fields
from compat_tests.support.scenario import start_app_server, start_model, write_config
from compat_tests.support.turn_checks import assert_no_divergence

pytestmark = pytest.mark.compat
SCENARIO = "stdio"
APPROVED = "approved-command-ran"
#: Printed by the approved command (built from two halves, so only its output holds the whole).
PRINTED = "stdio-canary-output-51c9"
EXPECTED = Expected(call_id="approval-call", command_marker=APPROVED, exit_code=0, output=PRINTED)


def _script(workspace: Path) -> list[dict[str, object]]:
    arguments = {
        "cmd": f"printf '%s' {APPROVED} > approved.txt; printf '%s%s' '{PRINTED[:10]}' '{PRINTED[10:]}'",
        "workdir": str(workspace),
        "sandbox_permissions": "require_escalated",
        "justification": "compat: write a file after approval",
    }
    call = {
        "type": "function_call",
        "call_id": EXPECTED.call_id,
        "name": "exec_command",
        "arguments": json.dumps(arguments),
    }
    return [{"output": [call]}, {"output": [{"type": "message", "text": "done"}]}]


async def _turn(rpc: AppServerRpc, workspace: Path) -> dict[str, object]:
    thread = await rpc.call(2, "thread/start", {"cwd": str(workspace)})
    turn_input = [{"type": "text", "text": "Write the file.", "textElements": []}]
    await rpc.call(3, "turn/start", {"threadId": thread["thread"]["id"], "input": turn_input})
    request = await rpc.wait_for("item/commandExecution/requestApproval")
    if "id" not in request:
        raise ScenarioError("item/commandExecution/requestApproval arrived as a notification, not a request")
    await rpc.respond(request["id"], {"decision": "accept"})
    return (await rpc.wait_for("turn/completed"))["params"]  # type: ignore[no-any-return]


async def test_client_runs_an_approved_command_over_stdio(
    app_build: Build, process_group: ProcessGroup, tmp_path: Path, pair_log: PairLog
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    rpc: AppServerRpc | None = None
    pair_log.expect(EXPECTED)
    try:
        model_url = await start_model(process_group, tmp_path, _script(workspace))
        home = tmp_path / "app-home"
        write_config(home, model_url, approval_policy="on-request")
        rpc = await start_app_server(process_group, app_build, home)
        completed = await _turn(rpc, workspace)
        check_item_fields(rpc.messages)
    except ScenarioError as exc:
        await process_group.stop_all()
        raise ScenarioError(
            exc.cause, f"{exc}\n{process_group.diagnostics()}\nlogs: {pair_log.folder}"
        ) from exc
    finally:
        await process_group.stop_all()
        pair_log.processes(process_group)
        pair_log.model_requests(tmp_path / "model-requests.jsonl")
        if rpc is not None:
            pair_log.write_lines("app-server.jsonrpc.jsonl", rpc.transcript_lines())
    assert_no_divergence(pair_log)
    turn = completed.get("turn", {})
    assert isinstance(turn, dict) and turn.get("status") == "completed", f"turn ended as {turn!r}"
    written = workspace / "approved.txt"
    assert written.is_file() and written.read_text() == APPROVED, "the approved command did not run"
