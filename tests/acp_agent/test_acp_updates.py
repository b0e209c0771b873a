"""The v2 -> ACP translation on its own (sans-IO): diffs, plans, streamed and replayed items, stop reasons."""

from __future__ import annotations

import pytest
from acp import RequestError

from acp_agent.agent import mcp_override
from acp_agent.permissions import decision_for, options_for
from acp_agent.session import stop_reason
from acp_agent.updates import TurnStream, diff_contents, history_updates


def test_diffs_of_an_add_an_update_and_a_delete() -> None:
    add, update, delete = diff_contents([
        {"path": "/w/new.txt", "kind": {"type": "add"}, "diff": "hello\n"},
        {"path": "/w/a.txt", "kind": {"type": "update", "move_path": None}, "diff": "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"},
        {"path": "/w/old.txt", "kind": {"type": "delete"}, "diff": "bye\n"},
    ])
    assert (add.path, add.old_text, add.new_text) == ("/w/new.txt", None, "hello\n")
    assert (update.old_text, update.new_text) == ("one\ntwo\nthree\n", "one\nTWO\nthree\n")
    assert (delete.old_text, delete.new_text) == ("bye\n", "")
    [moved] = diff_contents([{"path": "/w/a", "kind": {"type": "update", "move_path": "/w/b"}, "diff": "@@\n-x\n+y\n"}])
    assert moved.path == "/w/b"


def test_a_turn_streams_deltas_once_and_plans() -> None:
    stream = TurnStream("t1")
    kinds = []
    for method, params in [
        ("item/agentMessage/delta", {"turnId": "t1", "itemId": "m1", "delta": "hel"}),
        ("item/agentMessage/delta", {"turnId": "t0", "itemId": "m0", "delta": "other turn"}),
        ("item/completed", {"turnId": "t1", "item": {"type": "agentMessage", "id": "m1", "text": "hello"}}),
        ("item/completed", {"turnId": "t1", "item": {"type": "agentMessage", "id": "m2", "text": "whole"}}),
        ("turn/plan/updated", {"turnId": "t1", "plan": [{"step": "read", "status": "completed"},
                                                        {"step": "write", "status": "inProgress"}]}),
    ]:
        kinds += stream.feed(method, params)
    message, whole, plan = kinds
    assert message.content.text == "hel" and whole.content.text == "whole"
    assert [(e.content, e.status) for e in plan.entries] == [("read", "completed"), ("write", "in_progress")]


def test_command_output_accumulates_and_ends_with_its_status() -> None:
    stream = TurnStream("t")
    item = {"type": "commandExecution", "id": "c", "command": "ls", "cwd": "/w", "status": "inProgress",
            "commandActions": [{"type": "listFiles"}]}
    [start] = stream.feed("item/started", {"turnId": "t", "item": item})
    assert (start.tool_call_id, start.kind, start.status) == ("c", "search", "in_progress")
    stream.feed("item/commandExecution/outputDelta", {"turnId": "t", "itemId": "c", "delta": "a\n"})
    [progress] = stream.feed("item/commandExecution/outputDelta", {"turnId": "t", "itemId": "c", "delta": "b\n"})
    assert progress.content[0].content.text == "```\na\nb\n```"
    [end] = stream.feed("item/completed", {"turnId": "t", "item": dict(item, status="declined", aggregatedOutput="")})
    assert end.status == "failed"


def test_history_replays_every_item_kind() -> None:
    turns = [{"items": [
        {"type": "userMessage", "id": "u", "content": [{"type": "text", "text": "question"}]},
        {"type": "reasoning", "id": "r", "summary": ["thinking"], "content": []},
        {"type": "fileChange", "id": "f", "status": "completed",
         "changes": [{"path": "/w/n", "kind": {"type": "add"}, "diff": "x\n"}]},
        {"type": "agentMessage", "id": "a", "text": "answer"},
    ]}]
    updates = history_updates(turns)
    assert [u.session_update for u in updates] == [
        "user_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert updates[2].status == "completed" and updates[2].content[0].new_text == "x\n"


@pytest.mark.parametrize(("turn", "reason"), [
    ({"status": "completed"}, "end_turn"),
    ({"status": "interrupted"}, "cancelled"),
    ({"status": "failed", "error": {"message": "full", "codexErrorInfo": "contextWindowExceeded"}}, "max_tokens"),
    ({"status": "failed", "error": {"message": "no", "codexErrorInfo": "cyberPolicy"}}, "refusal"),
])
def test_stop_reasons(turn: dict[str, object], reason: str) -> None:
    assert stop_reason(turn) == reason


def test_other_failures_are_errors_with_the_turns_message() -> None:
    with pytest.raises(RequestError) as failed:
        stop_reason({"status": "failed", "error": {"message": "boom", "codexErrorInfo": "internalServerError"}})
    assert (failed.value.code, str(failed.value)) == (-32603, "boom")
    with pytest.raises(RequestError) as unauthorized:
        stop_reason({"status": "failed", "error": {"message": "401", "codexErrorInfo": {
            "httpConnectionFailed": {"httpStatusCode": 401}}}})
    assert unauthorized.value.code == -32000


def test_permission_options_follow_what_the_server_offers() -> None:
    assert [o.option_id for o in options_for("item/commandExecution/requestApproval",
                                             {"availableDecisions": ["accept", "cancel"]})] == ["allow_once", "reject_once"]
    assert len(options_for("item/fileChange/requestApproval", {})) == 3
    from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

    def answer(outcome: AllowedOutcome | DeniedOutcome) -> str:
        return decision_for(RequestPermissionResponse(outcome=outcome))

    assert answer(AllowedOutcome(option_id="allow_always", outcome="selected")) == "acceptForSession"
    assert answer(AllowedOutcome(option_id="reject_once", outcome="selected")) == "decline"
    assert answer(DeniedOutcome(outcome="cancelled")) == "cancel"


def test_mcp_servers_become_config_overrides() -> None:
    from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

    stdio = McpServerStdio(name="calc", command="python", args=["-m", "calc"], env=[EnvVariable(name="K", value='v"1')])
    assert mcp_override(stdio) == 'mcp_servers.calc={"command" = "python", "args" = ["-m", "calc"], "required" = true, "env" = {"K" = "v\\"1"}}'
    http = HttpMcpServer(name="web", url="http://127.0.0.1:1/mcp", headers=[HttpHeader(name="A", value="b")], type="http")
    assert mcp_override(http) == 'mcp_servers.web={"url" = "http://127.0.0.1:1/mcp", "required" = true, "http_headers" = {"A" = "b"}}'
    with pytest.raises(RequestError):
        mcp_override(McpServerStdio(name="bad name", command="x", args=[], env=[]))


def test_a_terminal_killed_by_a_signal_exits_128_plus_n() -> None:
    from acp_agent.editor import _signal_code

    assert (_signal_code("SIGTERM"), _signal_code("KILL"), _signal_code(None), _signal_code("odd")) == (143, 137, 1, 137)
