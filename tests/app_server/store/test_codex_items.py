"""app_server/store/codex_items.py against the binary's recordings, and v2 -> core -> v2 on pycodex's items.

Recordings: tests/data/storage/codex_0169/*.json (scripts/capture_codex_storage.py) and
tests/data/storage/codex_items/*.json (scripts/capture_codex_items.py). In both, the `item_completed` records
of all rollouts, in order, are the items of the last thread/read answer, in order.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from app_server.protocol.base import to_wire
from app_server.protocol.items import (
    AddPatchChangeKind,
    AgentMessageItem,
    ByteRange,
    CollabAgentState,
    CollabAgentToolCallItem,
    CommandExecutionItem,
    ContextCompactionItem,
    DeletePatchChangeKind,
    EnteredReviewModeItem,
    ExitedReviewModeItem,
    FileChangeItem,
    FileUpdateChange,
    ImageUserInput,
    ImageViewItem,
    ListFilesCommandAction,
    LocalAudioUserInput,
    LocalImageUserInput,
    MentionUserInput,
    PlanItem,
    ReadCommandAction,
    ReasoningItem,
    SearchCommandAction,
    SkillUserInput,
    TextElement,
    TextUserInput,
    UnknownCommandAction,
    UpdatePatchChangeKind,
    UserMessageItem,
)
from app_server.protocol.user_input import AudioUserInput
from app_server.shell_words import join_argv, split_command
from app_server.store.codex_items import (
    CORE_TYPES,
    LOST_FIELDS,
    MAPPED_V2_TYPES,
    core_from_v2,
    v2_from_core,
)
from pycodex.json_types import JsonObj
from scripts.capture_codex_items import SCENARIOS, normalize_keys, reduce
from scripts.capture_codex_storage import run_scenario, server_argv

DATA = Path(__file__).resolve().parents[2] / "data" / "storage"
RECORD_TIMES = ("startedAtMs", "completedAtMs")


def _codex_0169_pairs(path: Path) -> list[tuple[JsonObj, JsonObj]]:
    data = json.loads(path.read_text())
    core = [
        line["payload"]["item"]
        for rollout in data["rollouts"]
        for line in rollout["lines"]
        if line.get("type") == "event_msg" and line["payload"].get("type") == "item_completed"
    ]
    reads = [k["answer"]["result"] for k in data["rpc"] if k.get("method") == "thread/read"]
    v2 = [item for turn in reads[-1]["thread"]["turns"] for item in turn["items"]]
    assert len(core) == len(v2), path.name
    return list(zip(normalize_keys(core), v2, strict=True))


def _items_pairs(path: Path) -> list[tuple[JsonObj, JsonObj]]:
    data = json.loads(path.read_text())
    assert len(data["core"]) == len(data["v2"]), path.name
    return [(record["item"], item) for record, item in zip(data["core"], data["v2"], strict=True)]


def _pairs() -> list[tuple[str, JsonObj, JsonObj]]:
    out = []
    for path in sorted((DATA / "codex_0169").glob("*.json")):
        if path.name != "sqlite_schema.json":
            out += [(f"{path.stem}:{i}", c, v) for i, (c, v) in enumerate(_codex_0169_pairs(path))]
    for path in sorted((DATA / "codex_items").glob("*.json")):
        out += [(f"items/{path.stem}:{i}", c, v) for i, (c, v) in enumerate(_items_pairs(path))]
    return out


PAIRS = _pairs()


def _concrete(core: Any, key: str = "") -> Any:
    """The core item with the normalizer's "<NUM>" durations as numbers (the conversion computes on them)."""
    if isinstance(core, dict):
        return {k: _concrete(v, k) for k, v in core.items()}
    if isinstance(core, list):
        return [_concrete(v, key) for v in core]
    return 0 if core == "<NUM>" and key in ("secs", "nanos") else core


def _matches(actual: Any, expected: Any) -> bool:
    """Equal, where the recording's "<NUM>" stands for any number (or the same placeholder)."""
    if expected == "<NUM>":
        return actual == "<NUM>" or (isinstance(actual, int) and not isinstance(actual, bool))
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(_matches(actual[k], v) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_matches(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


def _without_times(item: JsonObj) -> JsonObj:
    return {k: v for k, v in item.items() if k not in RECORD_TIMES}


def test_recordings_cover_the_variants_we_could_drive() -> None:
    seen = {core["type"] for _, core, _ in PAIRS}
    assert {
        "UserMessage",
        "AgentMessage",
        "Reasoning",
        "CommandExecution",
        "FileChange",
        "WebSearch",
        "ImageView",
        "McpToolCall",
        "DynamicToolCall",
        "CollabAgentToolCall",
        "Plan",
        "ContextCompaction",
    } <= seen
    assert seen <= set(CORE_TYPES)


@pytest.mark.parametrize(("where", "core", "v2"), PAIRS, ids=[p[0] for p in PAIRS])
def test_v2_from_core_is_what_codex_thread_read_shows(where: str, core: JsonObj, v2: JsonObj) -> None:
    converted = v2_from_core(_concrete(core))
    assert converted is not None
    assert _matches(converted, _without_times(v2)), (where, converted, v2)


# What Codex writes that a v2 item does not hold: FileChange's tool output, the sub-agents' nicknames (and an
# empty command output, below). core_from_v2 writes receiver_agents as [].
CORE_ONLY = {"FileChange": ("stdout", "stderr"), "CollabAgentToolCall": ("receiver_agents",)}


@pytest.mark.parametrize(("where", "core", "v2"), PAIRS, ids=[p[0] for p in PAIRS])
def test_core_from_v2_is_what_codex_writes(where: str, core: JsonObj, v2: JsonObj) -> None:
    # A real folder for the <CWD> placeholder (the URI would percent-encode "<"), a number for durationMs.
    core, v2 = (json.loads(json.dumps(x).replace("<CWD>", "/tmp/cwd")) for x in (core, v2))
    if v2.get("durationMs") == "<NUM>":
        v2["durationMs"] = 5
    written = core_from_v2(v2)
    assert written is not None
    core_only = CORE_ONLY.get(core["type"], ())
    expected = {k: v for k, v in core.items() if k not in core_only}
    written = {k: v for k, v in written.items() if k not in core_only}
    if core["type"] == "CommandExecution" and core.get("aggregated_output") == "":
        del expected["aggregated_output"]  # v2 shows "" as null: nothing to write back
    if written.get("duration") is not None:
        written["duration"] = {"secs": "<NUM>", "nanos": "<NUM>"}
    assert _matches(written, expected), (where, written, core)


# ---- v2 -> core -> v2 on pycodex's items -------------------------------------------------------

CWD = "/work/some dir"
TEXT = TextUserInput(
    text="see $demo", text_elements=[TextElement(byte_range=ByteRange(start=4, end=9), placeholder="$demo")]
)
MODELLED: list[tuple[Any, set[str]]] = [
    (
        UserMessageItem(
            id="u1",
            content=[
                TEXT,
                ImageUserInput(url="data:image/png;base64,AA", detail="low"),
                LocalImageUserInput(path="/p/a.png"),
                LocalAudioUserInput(path="/p/a.wav"),
                SkillUserInput(name="demo", path="/s/SKILL.md"),
                MentionUserInput(name="n", path="app://n"),
            ],
        ),
        set(),
    ),
    (UserMessageItem(id="u2", client_id="c-1", content=[TextUserInput(text="hi")]), set()),
    (
        UserMessageItem(
            id="u3",
            content=[TEXT, AudioUserInput(url="data:audio/wav;base64,AA"), ImageUserInput(file_id="file_1")],
        ),
        {"content"},
    ),
    (
        AgentMessageItem(
            id="a1",
            text="hello",
            phase="final_answer",
            memory_citation={
                "entries": [{"path": "m.md", "lineStart": 1, "lineEnd": 2, "note": "x"}],
                "threadIds": ["t1"],
            },
        ),
        set(),
    ),
    (
        AgentMessageItem(
            id="a2", text="hi", moderation={"flagged": False}, delivery="async", questions=[{"id": "q"}]
        ),
        {"moderation", "delivery", "questions"},
    ),
    (PlanItem(id="p1", text="1. do it"), set()),
    (ReasoningItem(id="r1", summary=["a", "b"], content=["raw"]), set()),
    (
        CommandExecutionItem(
            id="c1",
            command="/bin/bash -lc 'cat a.txt && ls src'",
            cwd=CWD,
            process_id="42",
            source="unifiedExecStartup",
            status="completed",
            command_actions=[
                ReadCommandAction(command="cat a.txt", name="a.txt", path=f"{CWD}/a.txt"),
                ReadCommandAction(command="cat /etc/x", name="x", path="/etc/x"),
                ListFilesCommandAction(command="ls src", path="src"),
                SearchCommandAction(command="rg q", query="q", path=None),
                UnknownCommandAction(command="make"),
            ],
            aggregated_output="out\n",
            exit_code=0,
            duration_ms=1234,
        ),
        set(),
    ),
    (
        CommandExecutionItem(
            id="c2",
            command="/bin/bash -lc 'exit 3'",
            cwd="/w",
            status="failed",
            command_actions=[],
            exit_code=3,
            plugin_id="pl",
            script_path="s.sh",
        ),
        {"pluginId", "scriptPath"},
    ),
    (
        CommandExecutionItem(
            id="c3",
            command="true",
            cwd="/w",
            status="declined",
            source="agent",
            command_actions=[],
            aggregated_output="",
        ),
        {"aggregatedOutput"},
    ),
    (
        CommandExecutionItem(
            id="c4",
            command="/bin/bash -lc 'echo hi'",
            cwd="/w",
            status="inProgress",
            source="userShell",
            command_actions=[UnknownCommandAction(command="echo hi")],
        ),
        set(),
    ),
    (  # pycodex writes `command` with Python's shlex.join: Codex quotes a single quote differently
        CommandExecutionItem(
            id="c5",
            command=shlex.join(["/bin/bash", "-lc", "echo 'hi'"]),
            cwd="/w",
            status="completed",
            command_actions=[UnknownCommandAction(command="echo 'hi'")],
        ),
        {"command"},
    ),
    (
        FileChangeItem(
            id="f1",
            status="completed",
            changes=[
                FileUpdateChange(path="/w/a.txt", kind=AddPatchChangeKind(), diff="new\n"),
                FileUpdateChange(path="/w/b.txt", kind=DeletePatchChangeKind(), diff="old\n"),
                FileUpdateChange(
                    path="/w/c.txt",
                    kind=UpdatePatchChangeKind(move_path="/w/d.txt"),
                    diff="@@ -1 +1 @@\n-x\n+y\n\n\nMoved to: /w/d.txt",
                ),
                FileUpdateChange(path="/w/e.txt", kind=UpdatePatchChangeKind(), diff="@@ -1 +1 @@\n-x\n+y\n"),
            ],
        ),
        set(),
    ),
    (
        FileChangeItem(
            id="f2",
            status="failed",
            changes=[
                FileUpdateChange(path="/w/z.txt", kind=AddPatchChangeKind(), diff="z\n"),
                FileUpdateChange(path="/w/a.txt", kind=AddPatchChangeKind(), diff="a\n"),
            ],
        ),
        {"changes"},
    ),
    (
        CollabAgentToolCallItem(
            id="k1",
            tool="spawnAgent",
            status="completed",
            sender_thread_id="t0",
            receiver_thread_ids=["t1", "t2"],
            prompt="go",
            model="m",
            reasoning_effort="high",
            agents_states={
                "t1": CollabAgentState(status="completed", message="done"),
                "t2": CollabAgentState(status="running"),
            },
        ),
        set(),
    ),
    (ImageViewItem(id="i1", path="/w/pic one.png"), set()),
    (ContextCompactionItem(id="x1"), set()),
]
RAW: list[tuple[JsonObj, set[str]]] = [
    ({"type": "hookPrompt", "id": "h1", "fragments": [{"text": "t", "hookRunId": "r"}]}, set()),
    ({"type": "sleep", "id": "s1", "durationMs": 1500}, set()),
    (
        {
            "type": "webSearch",
            "id": "w1",
            "query": "q",
            "action": {"type": "search", "query": "q", "queries": ["q"]},
            "results": None,
        },
        set(),
    ),
    (
        {
            "type": "webSearch",
            "id": "w2",
            "query": "",
            "action": {"type": "openPage", "url": "https://x"},
            "results": [{"title": "x"}],
        },
        {"results"},
    ),
    (
        {
            "type": "webSearch",
            "id": "w3",
            "query": "",
            "action": {"type": "findInPage", "url": None, "pattern": "p"},
            "results": None,
        },
        set(),
    ),
    ({"type": "webSearch", "id": "w4", "query": "q", "action": None, "results": None}, {"action"}),
    (
        {
            "type": "dynamicToolCall",
            "id": "d1",
            "namespace": "ns",
            "tool": "t",
            "arguments": {"a": 1},
            "status": "completed",
            "contentItems": [{"type": "inputText", "text": "ok"}],
            "success": True,
            "durationMs": 7,
        },
        set(),
    ),
    (
        {
            "type": "subAgentActivity",
            "id": "sa1",
            "kind": "started",
            "agentThreadId": "t1",
            "agentPath": "/root/a",
            "model": None,
            "reasoningEffort": None,
        },
        set(),
    ),
    (
        {
            "type": "subAgentActivity",
            "id": "sa2",
            "kind": "completed",
            "agentThreadId": "t1",
            "agentPath": "/root/a",
            "model": "m",
            "reasoningEffort": "low",
        },
        {"model", "reasoningEffort"},
    ),
    (
        {
            "type": "imageGeneration",
            "id": "g1",
            "status": "completed",
            "revisedPrompt": "a cat",
            "savedPath": "/w/cat.png",
            "transparentBackground": None,
            "failure": None,
            "generationId": None,
        },
        set(),
    ),
    (
        {
            "type": "imageGeneration",
            "id": "g2",
            "status": "failed",
            "revisedPrompt": None,
            "transparentBackground": True,
            "failure": {"type": "usageLimitExceeded", "limitId": "l"},
            "generationId": "gen",
            "inputImages": [{"path": "/w/in.png", "sha256": "ab"}],
        },
        {"transparentBackground", "failure", "generationId", "inputImages"},
    ),
    (
        {
            "type": "mcpToolCall",
            "id": "m1",
            "server": "calc",
            "tool": "add",
            "status": "completed",
            "arguments": {"a": 2},
            "appContext": None,
            "mcpAppUi": None,
            "pluginId": None,
            "readOnlyHint": None,
            "result": {
                "content": [{"type": "text", "text": "5"}],
                "structuredContent": {"result": 5},
                "_meta": None,
            },
            "error": None,
            "durationMs": 4,
        },
        set(),
    ),
    (
        {
            "type": "mcpToolCall",
            "id": "m2",
            "server": "s",
            "tool": "t",
            "status": "failed",
            "arguments": None,
            "appContext": {
                "connectorId": "c",
                "linkId": "l",
                "resourceUri": "ui://x",
                "appName": "A",
                "actionName": "act",
            },
            "mcpAppResourceUri": "ui://x",
            "mcpAppUi": {"resourceUri": "ui://x", "preferredModelDisplayMode": "inline"},
            "pluginId": "p",
            "readOnlyHint": True,
            "result": None,
            "error": {"message": "boom"},
            "durationMs": None,
        },
        {"mcpAppUi"},
    ),
]


def _round_trip_cases() -> list[tuple[str, JsonObj, set[str]]]:
    cases = [(f"{m.type}:{m.id}", _without_times(to_wire(m)), lost) for m, lost in MODELLED]
    return cases + [(f"{raw['type']}:{raw['id']}", raw, lost) for raw, lost in RAW]


CASES = _round_trip_cases()


@pytest.mark.parametrize(("name", "item", "lost"), CASES, ids=[c[0] for c in CASES])
def test_v2_core_v2_loses_exactly_the_listed_fields(name: str, item: JsonObj, lost: set[str]) -> None:
    core = core_from_v2(item)
    assert core is not None and core["type"][0].isupper()
    back = v2_from_core(json.loads(json.dumps(core)))  # through JSON, as a rollout line goes
    assert back is not None
    differing = {k for k in item.keys() | back.keys() if item.get(k) != back.get(k)}
    assert differing == lost, (name, item, back)
    # Past the docstring's value notes (content, changes, action, aggregatedOutput, command), whatever
    # differs is a field LOST_FIELDS lists.
    value_notes = {"content", "changes", "action", "aggregatedOutput", "command"}
    assert differing - value_notes <= set(LOST_FIELDS.get(item["type"], ()))


def test_the_lossy_values_come_back_as_codex_shows_them() -> None:
    by_name = {name: item for name, item, _ in CASES}
    user = v2_from_core(core_from_v2(by_name["userMessage:u3"]) or {})
    assert user is not None and [e["type"] for e in user["content"]] == [
        "text"
    ]  # audio, file-id image dropped
    changes = v2_from_core(core_from_v2(by_name["fileChange:f2"]) or {})
    assert changes is not None and [c["path"] for c in changes["changes"]] == ["/w/a.txt", "/w/z.txt"]
    search = v2_from_core(core_from_v2(by_name["webSearch:w4"]) or {})
    assert search is not None and search["action"] == {"type": "other"}
    command = v2_from_core(core_from_v2(by_name["commandExecution:c3"]) or {})
    assert command is not None and command["aggregatedOutput"] is None
    requoted = v2_from_core(core_from_v2(by_name["commandExecution:c5"]) or {})
    assert requoted is not None and requoted["command"] == "/bin/bash -lc \"echo 'hi'\""


def test_every_v2_type_is_mapped_or_declared_unmapped() -> None:
    covered = {item["type"] for _, item, _ in CASES}
    assert covered == set(MAPPED_V2_TYPES)
    assert set(LOST_FIELDS) <= set(MAPPED_V2_TYPES)


@pytest.mark.parametrize(
    "item",
    [
        to_wire(EnteredReviewModeItem(id="e1", review="the diff")),
        to_wire(ExitedReviewModeItem(id="e2", review="looks fine")),
        {"type": "functionCallOutput", "id": "o1", "name": "f", "output": "x"},
        {"type": "somethingNew", "id": "n1"},
        {"id": "no-type"},
    ],
    ids=lambda item: str(item.get("type")),
)
def test_v2_types_without_a_core_variant_give_none(item: JsonObj) -> None:
    assert core_from_v2(item) is None


@pytest.mark.parametrize(
    "core",
    [
        {"type": "EnteredReviewMode", "id": "x"},
        {"type": "FunctionCallOutput", "id": "x"},
        {"type": "userMessage", "id": "x", "content": []},
        {"id": "x"},
    ],
)
def test_unknown_core_types_give_none(core: JsonObj) -> None:
    assert v2_from_core(core) is None


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["/bin/bash", "-lc", "echo hi"], "/bin/bash -lc 'echo hi'"),
        (["/bin/bash", "-lc", "ls"], "/bin/bash -lc ls"),
        (["printf", "a\\n'b'"], "printf \"a\\\\n'b'\""),
        (["echo", "'\""], 'echo "\'\\""'),  # the shlex crate's own test case
        (["echo", ""], "echo ''"),
        (["echo", "$HOME 'x'"], "echo '$HOME '\"'x'\""),
        (["echo", "^x", "a^b"], "echo '^x' a'^b'"),
        (["echo", "héllo", "a=b"], "echo 'héllo' 'a=b'"),
    ],
)
def test_commands_are_joined_as_codex_joins_them(argv: list[str], text: str) -> None:
    assert join_argv(argv) == text
    assert split_command(text) == argv


@pytest.mark.parametrize("argv", [["sh", "-c", "echo 'it''s' \"$x\" `y` \\z"], ["a b", "", "c\nd"], ["x!"]])
def test_split_reads_pythons_quoting_too(argv: list[str]) -> None:
    # pycodex's own items are written with Python's shlex.join; they must split back to the same argv.
    assert split_command(shlex.join(argv)) == argv
    assert split_command(join_argv(argv)) == argv


@pytest.mark.codex
@pytest.mark.parametrize("name", ["reasoning", "dynamic_tool"])
def test_a_fresh_run_of_the_binary_matches_the_recording(codex_bin: Path, name: str) -> None:
    # The recordings above stand for the binary only while it still writes them: re-run two cheap scenarios.
    scenario = next(s for s in SCENARIOS if s.name == name)
    fresh = reduce(asyncio.run(run_scenario(scenario, server_argv("codex", str(codex_bin)))))
    recorded = json.loads((DATA / "codex_items" / f"{name}.json").read_text())
    assert json.loads(json.dumps(fresh)) == recorded
