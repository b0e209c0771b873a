"""MCP servers through the app-server, end to end: the real calc server (stdio and streamable HTTP on
127.0.0.1), the fake model, and a schema-validating client. Expectations come from Codex 0.169's recordings
in tests/data/mcp/."""

from __future__ import annotations

import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.errors import as_codex
from tests.support.fake_model import message, model_config, run_turn
from tests.support.mcp_servers import CALC_SERVER, http_calc_server, pids_with
from tests.support.paths import REPO_ROOT
from tests.support.tools import require_codex

RECORDED = json.loads((REPO_ROOT / "tests" / "data" / "mcp" / "codex_0169_calc.json").read_text())
NEVER = "MCP tool call requires approval, but approval policy is never"


def _stdio_table(name: str = "calc", extra: str = "") -> tuple[str, str]:
    marker = f"marker-{uuid.uuid4().hex}"
    args = json.dumps([str(CALC_SERVER), "stdio", marker])
    return f'\n[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n{extra}', marker


def _configure(codex_home: Path, url: str, *tables: str, approval_policy: str = "never") -> None:
    model_config(codex_home, url, approval_policy=approval_policy)
    with (codex_home / "config.toml").open("a") as f:
        f.write("".join(tables))


def _mcp_call(call_id: str, name: str, arguments: dict[str, Any], server: str = "calc") -> dict[str, Any]:
    return {"type": "function_call", "namespace": f"mcp__{server}", "name": name, "call_id": call_id,
            "arguments": arguments}


def _outputs(model: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for request in model.requests():
        for item in request["body"].get("input", []):
            if item.get("type") == "function_call_output":
                out[item["call_id"]] = item["output"]
    return out


def _items(client: Any, method: str) -> dict[str, dict[str, Any]]:
    return {m["params"]["item"]["id"]: m["params"]["item"] for m in client.notifications(method)
            if m["params"]["item"]["type"] == "mcpToolCall"}


async def _ready(client: Any, thread_id: str, name: str = "calc") -> None:
    await client.wait_notification("mcpServer/startupStatus/updated",
                                   lambda p: p["threadId"] == thread_id and p["name"] == name and p["status"] == "ready",
                                   timeout=30)


async def test_the_model_calls_add_and_gets_the_result(app_server, fake_model, codex_home: Path, workspace: Path) -> None:
    model = await fake_model([[_mcp_call("call_add", "add", {"a": 2, "b": 3})], [message("five")]])
    table, marker = _stdio_table()
    _configure(codex_home, model.url, table)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _ready(client, thread_id)
    assert pids_with(marker), "the thread's MCP server runs"
    final = await run_turn(client, thread_id, "add", timeout=30)
    assert final["status"] == "completed"
    first = model.requests()[0]["body"]
    namespace = next(t for t in first["tools"] if t.get("name") == "mcp__calc")
    assert namespace == RECORDED["namespace_tool"]  # the golden tool spec Codex 0.169 sends
    started, done = _items(client, "item/started")["call_add"], _items(client, "item/completed")["call_add"]
    assert started["status"] == "inProgress" and started["readOnlyHint"] is True
    assert done["status"] == "completed" and done["result"]["structuredContent"] == {"result": 5}
    output = _outputs(model)["call_add"]
    assert output.startswith("Wall time: ") and output.endswith('Output:\n{"result":5}')
    await client.close()
    assert pids_with(marker) == [], "no MCP server outlives the app-server"


async def test_never_refuses_unless_the_tool_is_pre_approved(app_server, fake_model, codex_home: Path,
                                                             workspace: Path) -> None:
    model = await fake_model([[_mcp_call("call_echo", "echo", {"text": "hi"}),
                               _mcp_call("call_echo_ok", "echo", {"text": "ok"}, server="calc_ok")],
                              [message("done")]])
    refused, _ = _stdio_table()
    approved, _ = _stdio_table("calc_ok", '[mcp_servers.calc_ok.tools.echo]\napproval_mode = "approve"\n')
    _configure(codex_home, model.url, refused, approved)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _ready(client, thread_id)
    await _ready(client, thread_id, "calc_ok")
    assert (await run_turn(client, thread_id, "echo", timeout=30))["status"] == "completed"
    done = _items(client, "item/completed")
    assert done["call_echo"]["status"] == "failed" and done["call_echo"]["error"] == {"message": NEVER}
    assert done["call_echo_ok"]["status"] == "completed"
    outputs = _outputs(model)
    assert outputs["call_echo"][1] == {"type": "input_text", "text": NEVER}
    assert outputs["call_echo_ok"][1] == {"type": "input_text", "text": "ok"}


@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
async def test_on_request_asks_the_client(action: str, app_server, fake_model, codex_home: Path,
                                          workspace: Path) -> None:
    model = await fake_model([[_mcp_call("call_echo", "echo", {"text": "asked"})], [message("done")]])
    table, _ = _stdio_table()
    _configure(codex_home, model.url, table, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _ready(client, thread_id)
    turn = (await client.call("turn/start", {"threadId": thread_id,
                                             "input": [{"type": "text", "text": "echo"}]}))["turn"]
    request = await client.wait_server_request("mcpServer/elicitation/request", timeout=30)
    params = request["params"]
    assert params["threadId"] == thread_id and params["turnId"] == turn["id"] and params["serverName"] == "calc"
    assert params["message"] == 'Allow the calc MCP server to run tool "echo"?'
    assert params["_meta"]["tool_params"] == {"text": "asked"}
    assert "call_echo" in _items(client, "item/started")  # item/started goes out before the question
    await client.respond(request["id"], {"action": action, "content": None})
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=30)
    done = _items(client, "item/completed")["call_echo"]
    if action == "accept":
        assert done["status"] == "completed" and done["result"]["content"] == [{"type": "text", "text": "asked"}]
        assert _outputs(model)["call_echo"][1] == {"type": "input_text", "text": "asked"}
    else:  # Codex 0.169's words; the turn goes on
        text = {"decline": "user rejected MCP tool call", "cancel": "user cancelled MCP tool call"}[action]
        assert done["status"] == "failed" and done["result"] is None and done["error"] == {"message": text}
        assert done["durationMs"] == 0
        assert _outputs(model)["call_echo"][1] == {"type": "input_text", "text": text}


async def test_tool_call_needs_a_thread_and_reload_picks_up_a_new_server(app_server, codex_home: Path,
                                                                         workspace: Path) -> None:
    table, _ = _stdio_table()
    _configure(codex_home, "http://127.0.0.1:9/v1", table)
    client = await app_server()
    args = {"server": "calc", "tool": "add", "arguments": {"a": 1, "b": 2}}
    missing = await client.request("mcpServer/tool/call", args)
    assert missing["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_params"},
                                "message": "Invalid request: missing field `threadId`"}
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    result = await client.call("mcpServer/tool/call", {"threadId": thread_id, **args}, timeout=30)
    assert result == {"content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3},
                      "isError": False}
    before = await client.request("mcpServer/tool/call", {"threadId": thread_id, **args, "server": "calc2"})
    assert before["error"] == {"code": -32603, "data": {"appErrorCode": "internal_error"},
                               "message": "unknown MCP server 'calc2'"}
    added, marker = _stdio_table("calc2")
    with (codex_home / "config.toml").open("a") as f:
        f.write(added)
    assert await client.call("config/mcpServer/reload") == {}
    after = await client.call("mcpServer/tool/call", {"threadId": thread_id, **args, "server": "calc2"}, timeout=30)
    assert after["structuredContent"] == {"result": 3}
    status = await client.call("mcpServerStatus/list", {"threadId": thread_id}, timeout=30)
    assert [(s["name"], s["runtimeStatus"]) for s in status["data"]] == [("calc", "connected"), ("calc2", "connected")]
    assert "add" in status["data"][0]["tools"]
    first = await client.call("mcpServerStatus/list", {"limit": 1}, timeout=30)
    assert [s["name"] for s in first["data"]] == ["calc"] and first["data"][0]["runtimeStatus"] is None
    assert first["nextCursor"] is not None
    read = await client.call("mcpServer/resource/read", {"server": "calc", "uri": "calc://greeting"}, timeout=30)
    assert read["contents"][0]["text"] == "hello from calc"
    login = await client.request("mcpServer/oauth/login", {"name": "calc"})
    assert login["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "OAuth login is only supported for streamable HTTP servers."}
    await client.call("thread/unsubscribe", {"threadId": thread_id})
    await client.close()
    assert pids_with(marker) == []


async def test_streamable_http_server(app_server, fake_model, codex_home: Path, workspace: Path) -> None:
    model = await fake_model([[_mcp_call("call_add", "add", {"a": 20, "b": 22}, server="web")], [message("42")]])
    async with http_calc_server() as url:
        _configure(codex_home, model.url, f'\n[mcp_servers.web]\nurl = "{url}"\n')
        client = await app_server()
        thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
        await _ready(client, thread_id, "web")
        assert (await run_turn(client, thread_id, "add", timeout=30))["status"] == "completed"
        assert _outputs(model)["call_add"].endswith('{"result":42}')
        await client.close()


async def test_a_bad_server_table_fails_closed_with_its_position(app_server, codex_home: Path,
                                                                  workspace: Path) -> None:
    _configure(codex_home, "http://127.0.0.1:9/v1",
               '\n[mcp_servers.calc]\ncommand = "x"\nstartup_timeout_sec = "soon"\nbogus = 1\n')
    client = await app_server()
    answer = await client.request("thread/start", {"cwd": str(workspace)})
    message_text = answer["error"]["message"]
    assert "config.toml:" in message_text and 'invalid type: string "soon"' in message_text


async def test_always_allow_is_written_to_config_and_archive_stops_the_server(app_server, fake_model, codex_home: Path,
                                                                              workspace: Path) -> None:
    model = await fake_model([[_mcp_call("call_1", "echo", {"text": "one"})], [message("ok")],
                              [_mcp_call("call_2", "echo", {"text": "two"})], [message("ok")]])
    table, marker = _stdio_table()
    _configure(codex_home, model.url, table, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _ready(client, thread_id)
    turn = (await client.call("turn/start", {"threadId": thread_id,
                                             "input": [{"type": "text", "text": "1"}]}))["turn"]
    request = await client.wait_server_request("mcpServer/elicitation/request", timeout=30)
    await client.respond(request["id"], {"action": "accept", "content": None, "_meta": {"persist": "always"}})
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=30)
    assert 'approval_mode = "approve"' in (codex_home / "config.toml").read_text()
    assert (await run_turn(client, thread_id, "2", timeout=30))["status"] == "completed"  # not asked again
    asked = [m for m in client.messages if m.get("method") == "mcpServer/elicitation/request" and "id" in m]
    assert len(asked) == 1
    assert _items(client, "item/completed")["call_2"]["status"] == "completed"
    assert pids_with(marker)
    await client.call("thread/archive", {"threadId": thread_id}, timeout=30)
    assert pids_with(marker) == [], "an archived thread's MCP server stops with it"
    gone = await client.request("mcpServer/tool/call", {"threadId": thread_id, "server": "calc", "tool": "add",
                                                        "arguments": {"a": 1, "b": 1}})
    assert gone["error"]["message"] == f"thread not found: {thread_id}"


def _normalized(client: Any, model: Any) -> tuple[Any, ...]:
    """What must match Codex: the tool spec offered, the items (clock fields dropped) and the model outputs."""
    clock = ("startedAtMs", "completedAtMs", "durationMs")
    items = {key: {k: v for k, v in item.items() if k not in clock} for key, item in _items(client, "item/completed").items()}
    outputs = {k: re.sub(r"Wall time: [0-9.]+ seconds", "Wall time: N seconds", json.dumps(v))
               for k, v in _outputs(model).items()}
    spec = next(t for t in model.requests()[0]["body"]["tools"] if t.get("name") == "mcp__calc")
    return spec, items, outputs


async def _turn_answering(client: Any, thread_id: str, answer: str | None) -> list[Any]:
    """Run a turn; answer each MCP approval question with `answer`. Returns the questions (ids made neutral)."""
    turn = (await client.call("turn/start", {"threadId": thread_id,
                                             "input": [{"type": "text", "text": "go"}]}))["turn"]
    questions = []
    if answer is not None:
        request = await client.wait_server_request("mcpServer/elicitation/request", timeout=60)
        questions.append(dict(request["params"], threadId="T", turnId="U"))
        await client.respond(request["id"], {"action": answer, "content": None})
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=60)
    assert done["params"]["turn"]["status"] == "completed"
    return questions


# Each case starts both app-servers and an MCP server under each (~6 s). on-request-accept is kept in the
# default run: it goes through the approval question, both tools' results and the follow-up request, the
# widest stretch of the shared path. The other two differ only in the answer to the question (never asks
# none): their model-visible words are pinned in the default run by test_never_refuses_unless_the_tool_is_
# pre_approved and test_on_request_asks_the_client[decline]; their full comparison runs with PYCODEX_SLOW=1.
@pytest.mark.codex
@pytest.mark.parametrize(("policy", "answer"), [
    pytest.param("never", None, marks=pytest.mark.slow),
    ("on-request", "accept"),
    pytest.param("on-request", "decline", marks=pytest.mark.slow),
])
async def test_a_turn_matches_codex(policy: str, answer: str | None, app_server, fake_model, tmp_path: Path,
                                    workspace: Path) -> None:
    codex_bin = require_codex()
    script = [[_mcp_call("call_add", "add", {"a": 2, "b": 3}), _mcp_call("call_echo", "echo", {"text": "hi"})],
              [message("done")]]
    seen = {}
    for label, argv in (("pycodex", [sys.executable, "-m", "pycodex", "app-server"]),
                        ("codex", [str(codex_bin), "app-server"])):
        home = tmp_path / f"home_{label}"
        model = await fake_model(script, name=f"model_{label}")
        table, marker = _stdio_table()
        _configure(home, model.url, table, approval_policy=policy)
        client = await app_server(argv=argv, codex_home=home)
        # A cold process's first thread imports the turn machinery and starts the MCP server: bounded by the
        # server's startup timeout (30 s), not by the default 10 s of a request.
        thread_id = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=60))["thread"]["id"]
        await _ready(client, thread_id)
        questions = await _turn_answering(client, thread_id, answer)
        seen[label] = (*_normalized(client, model), questions)
        await client.close()
        assert pids_with(marker) == [], f"{label} left its MCP server running"
    assert seen["pycodex"] == seen["codex"]


REPLAYED = {"mcpServerStatus/list", "mcpServer/tool/call", "mcpServer/resource/read", "mcpServer/oauth/login"}


async def test_recorded_requests_get_codex_answers(app_server, codex_home: Path, workspace: Path) -> None:
    """The direct requests of tests/data/mcp/codex_0169_app_server.json, replayed through our app-server on a
    thread with the same server: every answer equals Codex 0.169's (thread-less lists, before calc2 exists)."""
    recorded = json.loads((REPO_ROOT / "tests" / "data" / "mcp" / "codex_0169_app_server.json").read_text())
    turn_at = next(i for i, e in enumerate(recorded) if e.get("request", {}).get("method") == "turn/start")
    chosen = [e for e in recorded[:turn_at] if e.get("request", {}).get("method") in REPLAYED]
    chosen += [e for e in recorded[turn_at:] if e.get("request", {}).get("method") == "mcpServer/oauth/login"]
    assert len(chosen) >= 10
    table, _ = _stdio_table()
    _configure(codex_home, "http://127.0.0.1:9/v1", table)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _ready(client, thread_id)
    for entry in chosen:
        request = entry["request"]
        params = json.loads(json.dumps(request["params"]).replace("THREAD_1", thread_id))
        answer = await client.request(request["method"], params, timeout=30)
        expected = {k: v for k, v in entry["response"].items() if k in ("result", "error")}
        if params.get("threadId") == "nope":  # the uuid crate's wording is the store's (shared) concern
            assert answer["error"]["code"] == -32600 and answer["error"]["message"].startswith("invalid thread id:")
            continue
        seen = {k: as_codex(v) if k == "error" else v for k, v in answer.items() if k in ("result", "error")}
        assert seen == expected, request


async def test_an_interrupted_call_leaves_the_server_usable(app_server, fake_model, codex_home: Path,
                                                            workspace: Path) -> None:
    model = await fake_model([[_mcp_call("call_slow", "slow", {})], [message("next turn")]])
    table, _ = _stdio_table(extra='[mcp_servers.calc.tools.slow]\napproval_mode = "approve"\n')
    _configure(codex_home, model.url, table)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _ready(client, thread_id)
    turn = (await client.call("turn/start", {"threadId": thread_id,
                                             "input": [{"type": "text", "text": "slow"}]}))["turn"]
    await client.wait_notification("item/started", lambda p: p["item"]["id"] == "call_slow", timeout=30)
    await client.call("turn/interrupt", {"threadId": thread_id, "turnId": turn["id"]})
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=30)
    assert done["params"]["turn"]["status"] == "interrupted"
    result = await client.call("mcpServer/tool/call", {"threadId": thread_id, "server": "calc", "tool": "add",
                                                       "arguments": {"a": 1, "b": 1}}, timeout=30)
    assert result["structuredContent"] == {"result": 2}
    assert not [m for m in client.notifications("item/completed") if m["params"]["item"]["id"] == "call_slow"]
    await run_turn(client, thread_id, "again", timeout=30)  # the aborted call reaches the model as Codex words it
    assert re.fullmatch(r"aborted by user after [0-9]+\.[0-9]s", _outputs(model)["call_slow"])


ASKER = REPO_ROOT / "tests" / "support" / "mcp_asker_server.py"


# Codex's side of the "never" pair runs with PYCODEX_SLOW=1: the on-request pair proves on the binary that
# a server's question is answered without reaching the client, and pycodex-never still pins the decline.
@pytest.mark.parametrize(("target", "policy", "expected"), [
    ("pycodex", "never", "decline:None"),
    ("pycodex", "on-request", "cancel:None"),
    pytest.param("codex", "never", "decline:None", marks=[pytest.mark.codex, pytest.mark.slow]),
    pytest.param("codex", "on-request", "cancel:None", marks=pytest.mark.codex),
])
async def test_a_servers_own_elicitation_is_answered_as_codex_does(target: str, policy: str, expected: str,
                                                                   app_server, fake_model, tmp_path: Path,
                                                                   workspace: Path) -> None:
    """Codex 0.169 does not forward a server's elicitation to the client: it declines under "never" and
    cancels otherwise, and the tool carries on with that answer."""
    argv = None
    if target == "codex":
        codex_bin = require_codex()
        argv = [str(codex_bin), "app-server"]
    model = await fake_model([[_mcp_call("call_ask", "ask", {}, server="asker")], [message("ok")]])
    home = tmp_path / "home"
    _configure(home, model.url, f'\n[mcp_servers.asker]\ncommand = {json.dumps(sys.executable)}\n'
               f'args = [{json.dumps(str(ASKER))}]\n[mcp_servers.asker.tools.ask]\napproval_mode = "approve"\n',
               approval_policy=policy)
    client = await app_server(argv=argv, codex_home=home)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await _ready(client, thread_id, "asker")
    assert (await run_turn(client, thread_id, "ask", timeout=30))["status"] == "completed"
    assert _items(client, "item/completed")["call_ask"]["result"]["structuredContent"] == {"result": expected}
    assert not [m for m in client.messages if "id" in m and "method" in m]  # nothing was asked
