"""tool_search against Codex 0.169's recording (tests/data/tools/codex_0169_tool_search.json, written by
scripts/capture_tool_search.py): a gpt-5.5 thread's MCP tools are deferred behind it, the model finds one and
calls it, and every recorded no-match and bad-argument case gets Codex's answer (an empty ``tools`` list).
The end-to-end tests pass against the binary too (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app_server.mcp.manager import McpConnectionManager
from app_server.model import events as ev
from app_server.threads.sampling import HistoryAppend, SampleMapper, ToolCall
from app_server.tools.tool_search import DEFAULT_LIMIT, Bm25Index, DeferredTool, search_output, tokens
from app_server.tools.toolset import NOT_BUILT
from scripts.capture_tool_search import ADD, DONE, raw_reply, search_reply
from tests.support.mcp_servers import CALC_SERVER, stdio_calc
from tests.support.paths import DATA

RECORDED = json.loads((DATA / "tools" / "codex_0169_tool_search.json").read_text())
CASES = {case["name"]: case for case in RECORDED["cases"]}
CALC_NAMESPACE = json.loads((DATA / "mcp" / "codex_0169_calc.json").read_text())["namespace_tool"]
#: Codex adds these when MCP servers are configured; pycodex does not offer MCP resource tools to the model yet.
MCP_RESOURCE_TOOLS = {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}
#: Codex defers its sub-agent namespace for gpt-5.5 behind tool_search; pycodex offers gpt-5.5 none yet.
GPT55_SUB_AGENTS = {"multi_agent_v1"}
WALL = re.compile(r"^Wall time: [0-9.]+ seconds")

pytestmark = pytest.mark.timeout(90)


_reply, _search = raw_reply, search_reply  # the recorded scenarios' own replies


def _config(codex_home: Path, url: str, model: str) -> None:
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{model}"\napproval_policy = "never"\nsandbox_mode = "read-only"\n'
        'model_provider = "mock"\n[model_providers.mock]\nname = "mock"\n'
        f'base_url = "{url}"\nwire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
        f'[mcp_servers.calc]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(CALC_SERVER))}, "stdio"]\n'
        'required = true\n[mcp_servers.calc.tools.add]\napproval_mode = "approve"\n')


def _normal(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items from the tool_search_call on, with what differs run to run (output ids, wall times) blanked."""
    start = next(i for i, item in enumerate(items) if item.get("type") == "tool_search_call")
    out = []
    for item in items[start:]:
        item = dict(item)
        if str(item.get("id", "")).startswith(("tso_", "fco_")):
            item["id"] = item["id"][:4] + "ID"
        if isinstance(item.get("output"), str):
            item["output"] = WALL.sub("Wall time: T seconds", item["output"])
        out.append(item)
    return out


def _deferred_namespaces(body: dict[str, Any]) -> list[list[str]]:
    """Per ``<tools>`` developer part of the request, the namespaces it lists (as the recorder reads them)."""
    texts = [part["text"] for item in body["input"] if item.get("role") == "developer"
             for part in item.get("content", []) if part.get("text", "").startswith("<tools>")]
    return [[line[2:].split(":")[0] for line in text.splitlines() if line.startswith("- ")] for text in texts]


def _names(body: dict[str, Any]) -> list[str]:
    return [t.get("name") or t["type"] for t in body.get("tools", [])]


async def _turn(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, script: list[Any],
                model: str = "gpt-5.5") -> tuple[Any, Any]:
    fake = await fake_model(script)
    _config(codex_home, fake.url, model)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "find a tool"}]})
    await client.wait_notification("turn/completed", timeout=60)
    return fake, client


# -- the search itself, on the real calc server's tools ---------------------------------------------------------


@pytest.fixture
async def deferred() -> AsyncIterator[list[DeferredTool]]:
    config, _ = stdio_calc()
    manager = McpConnectionManager({"calc": config})
    manager.start()
    await manager.wait_ready()
    try:
        yield [DeferredTool(spec, text) for spec, text in manager.deferred_tools()]
    finally:
        await manager.shutdown()


def _functions(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    assert all(t["type"] == "namespace" and t["name"] == "mcp__calc" for t in tools)
    return {f["name"]: f for t in tools for f in t["tools"]}


async def test_every_recorded_search_gets_codex_answer(deferred: list[DeferredTool]) -> None:
    for name, case in CASES.items():
        recorded = case["input_after_search"][1]
        ours = search_output("call_search", deferred, json.dumps(case["arguments"]))
        assert {**ours, "id": ours["id"][:4] + "ID"} | {"tools": None} == recorded | {"tools": None}, name
        if name == "sub-agents":
            # Codex defers its sub-agent namespace behind tool_search too; pycodex does not offer gpt-5.5 the
            # sub-agent tools yet, deferred or not (a known gap, named in docs/usage.md and tool_search.deferred_tools).
            assert [t["name"] for t in recorded["tools"]] == ["multi_agent_v1"]
            assert ours["tools"] == []
            continue
        assert len(ours["tools"]) == len(recorded["tools"]) <= 1, name  # one server: one namespace
        # The same tools, each spec exactly as Codex's; as sets, because Codex orders equal scores unstably
        # ("slow" and "fail" tie). No match and every bad argument: nothing, as Codex.
        assert _functions(ours["tools"]) == _functions(recorded["tools"]), name
    assert {n: len(_functions(c["input_after_search"][1]["tools"])) for n, c in CASES.items() if n != "sub-agents"} \
        == {"found": 1, "default limit": 5, "limit 2": 2, "limit null": 5, "no match": 0, "empty query": 0,
            "limit 0": 0, "limit 2.0": 0, "limit -1": 0, "no query": 0, "query not a string": 0,
            "arguments a string": 0}


def test_without_a_limit_at_most_eight_tools_come_back() -> None:
    # Codex's TOOL_SEARCH_DEFAULT_LIMIT is 8 (the recording has five tools only, all found)
    tools = [DeferredTool({"type": "namespace", "name": "mcp__cal", "tools": [{"type": "function", "name": f"t{i}"}]},
                          f"calendar event number {i}") for i in range(10)]
    found = search_output("c", tools, json.dumps({"query": "calendar"}))["tools"]
    assert DEFAULT_LIMIT == 8 and len(found[0]["tools"]) == 8
    assert len(search_output("c", tools, json.dumps({"query": "calendar", "limit": 9}))["tools"][0]["tools"]) == 9


async def test_the_namespace_of_several_matches_is_one_spec_in_rank_order(deferred: list[DeferredTool]) -> None:
    ours = search_output("c", deferred, json.dumps({"query": "calc echo", "limit": 3}))["tools"]
    assert [t["name"] for t in ours] == ["mcp__calc"]  # three hits of one server: one namespace
    functions = ours[0]["tools"]
    assert len(functions) == 3 and functions[0]["name"] == "echo"  # the one matching both terms ranks first
    assert all(f["defer_loading"] is True for f in functions)


def test_bm25_ranks_by_the_rarer_and_denser_terms() -> None:
    index = Bm25Index(["calendar create event", "calendar list events", "mail send message to someone else"])
    assert index.search("create an event", 8) == [0, 1]
    assert index.search("calendar", 1) in ([0], [1])
    assert index.search("nothing like it", 8) == []
    assert tokens("Adding the Integers, mcp__calc__add") == ["add", "integer", "mcp__calc__add"]


def test_a_client_search_call_is_kept_in_history_and_run_a_hosted_one_only_kept() -> None:
    raw = {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_search", "execution": "client",
           "status": "completed", "arguments": {"query": "add", "limit": 2}}
    actions = SampleMapper("t", "u").feed(ev.OutputItemDone(0, ev.parse_item(raw)))
    assert actions == [HistoryAppend(raw), ToolCall("call_search", "tool_search", '{"query": "add", "limit": 2}',
                                                    tool_search=True)]
    hosted = {**raw, "execution": "server"}
    assert SampleMapper("t", "u").feed(ev.OutputItemDone(0, ev.parse_item(hosted))) == [HistoryAppend(hosted)]


# -- a gpt-5.5 thread end to end ---------------------------------------------------------------------------------


async def test_gpt55_defers_mcp_tools_then_finds_and_calls_one(
    app_server: Any, app_server_argv: list[str] | None, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    case = CASES["found"]
    fake, client = await _turn(app_server, fake_model, codex_home, workspace,
                               [_search(case["arguments"]), ADD, DONE])
    bodies = [r["body"] for r in fake.requests()]
    assert len(bodies) == case["requests"] == 3
    # Against the binary (PYCODEX_TEST_TARGET=codex) the recording holds as it is; pycodex lacks named tools.
    lacking = NOT_BUILT | MCP_RESOURCE_TOOLS | GPT55_SUB_AGENTS if app_server_argv is None else set()
    codex_first = [n for n in case["first_tools"] if n not in lacking]
    assert _names(bodies[0]) == codex_first
    assert "tool_search" in codex_first and "mcp__calc" not in codex_first  # deferred, as Codex defers it
    assert [_names(b) for b in bodies[1:]] == [codex_first] * 2  # a found tool does not join `tools`
    # The developer context names the deferred namespaces (the same part in every request of the turn).
    told = [[name for name in names if name not in lacking] for names in case["deferred_namespaces"]]
    assert "mcp__calc" in told[0] and [_deferred_namespaces(b) for b in bodies] == [told] * 3
    assert _normal(bodies[-1]["input"]) == _normal(case["input_after_search"])  # the add call really ran
    items = [[n["method"], n["params"]["item"]["type"]] for n in client.notifications()
             if n["method"] in ("item/started", "item/completed")]
    assert items == RECORDED["app_server_items"]  # nothing is shown for the search itself


async def test_the_model_is_told_when_the_deferred_namespaces_change(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    fake = await fake_model([DONE, DONE, DONE])
    _config(codex_home, fake.url, "gpt-5.5")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]

    async def turn() -> list[list[str]]:
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]})
        await client.wait_notification("turn/completed", lambda p: p["threadId"] == thread_id, timeout=60)
        return _deferred_namespaces(fake.requests()[-1]["body"])

    first = await turn()
    assert first and first[-1][0] == "mcp__calc"
    config = (codex_home / "config.toml").read_text()
    calc2 = config[config.index("[mcp_servers.calc]"):].replace("[mcp_servers.calc]", "[mcp_servers.calc2]", 1)
    (codex_home / "config.toml").write_text(config + calc2.replace("[mcp_servers.calc.", "[mcp_servers.calc2."))
    await client.call("config/mcpServer/reload")
    second = await turn()
    assert second[: len(first)] == first and len(second) == len(first) + 1  # one more part, the change
    assert "mcp__calc2" in second[-1]
    assert await turn() == second  # nothing changed: nothing more said


@pytest.mark.parametrize("name", ["no match", "arguments a string"])
async def test_no_match_and_bad_arguments_answer_an_empty_list(
    name: str, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    case = CASES[name]
    fake, _ = await _turn(app_server, fake_model, codex_home, workspace, [_search(case["arguments"]), DONE])
    bodies = [r["body"] for r in fake.requests()]
    assert len(bodies) == case["requests"] == 2
    assert _normal(bodies[-1]["input"]) == _normal(case["input_after_search"])


async def test_a_model_without_tool_search_gets_the_mcp_namespace(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    fake, _ = await _turn(app_server, fake_model, codex_home, workspace, [DONE], model="mock-model")
    tools = fake.requests()[0]["body"]["tools"]
    assert "tool_search" not in _names({"tools": tools})
    assert [t for t in tools if t.get("name") == "mcp__calc"] == [CALC_NAMESPACE]
