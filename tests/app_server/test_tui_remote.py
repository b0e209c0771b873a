"""The real Codex TUI (`codex --remote ws://...`) driven in tmux against pycodex's app-server, and, with the
same steps, against Codex's own of the same release (which proves the steps). Each test runs with the 0.169 TUI
(the reference binary) and the 0.171 one (from the compat build cache, installed with npm on first use); the
0.171 variants of the compaction and permissions tests, the 0.169 one of the /mcp test, and the Codex-server
variants run with PYCODEX_SLOW=1. Skips when tmux or the Codex binary is absent.

* It starts, runs a prompt with an approval, shows no error line, shows the generated title in the status line,
  and resumes the session through `resume <id>` and through the /resume picker (which lists it by that title),
  with the earlier turns on screen.
* It compacts (a real compaction turn through the fake model: the next turn's request carries the summary), forks
  (the fork shows the earlier turns; the /resume picker lists it beside its source, neither marked unread), lists
  the server's whole model catalog in /model, and exits with /quit, printing the `resume` hint for the fork.
* /permissions -> Read Only is announced (/status says Read Only), the next prompt runs (it is not held under
  "Queued follow-up inputs") and its write is refused: the file is not created and the command fails.
* /mcp verbose lists the configured MCP server as connected, with its tools and resources.
* pycodex answers no request with -32601 (method not found): its `--trace` record shows every answer.

The TUI starts an ephemeral title thread after each prompt of an untitled thread; its model request follows the
main turn's first request (it needs three round trips more), so the scripts put the title answer second. Once
the title shows in the status line the thread is titled and no more title requests come. The title thread is
the client's: neither Codex's app-server (0.169 or 0.171) nor pycodex's asks the model for a title itself. The
0.171 TUI starts it with `permissions: ":read-only"` (0.169: `sandbox: "read-only"`) and gives up unless the
answer's sandbox is read-only: it then names the thread after the first prompt (the footer and the /resume picker
show the prompt, not the title).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import exec_call, message, model_config
from tests.support.mcp_servers import CALC_SERVER
from tests.support.tools import require_tmux
from tests.support.tui import (
    Remote,
    Tui,
    catalog_rows,
    error_lines,
    remote_app_server,
    tui_binary,
    unsupported_answers,
)

pytestmark = [pytest.mark.codex, pytest.mark.timeout(240)]

PROMPT = "Ask Codex to do anything"
# The status line under the composer once the TUI has its session (a splash screen can show the prompt before).
READY = "mock-model default · "
# The model: one escalated command (the approval), the title thread's structured answer, the follow-up. The
# command may take up to 30 s (the longest yield) before it counts as a background terminal: on a busy machine the
# default 10 s was seen to pass, and the resumed screen then shows no finished command.
APPROVAL_SCRIPT = [
    {"output": [exec_call("c1", "printf hi > out.txt", sandbox_permissions="require_escalated",
                          justification="write a file", yield_time_ms=30_000)]},
    {"output": [message('{"title":"Write file"}')]},
    {"output": [message("done writing")]},
]
# Two plain turns (the title answer second), the compaction turn's summary, then the turn after it.
SUMMARY = "summary of the first two turns"
COMPACT_SCRIPT = [
    {"output": [message("first answer")]},
    {"output": [message('{"title":"Two turns"}')]},
    {"output": [message("second answer")]},
    {"output": [message(SUMMARY)]},
    {"output": [message("third answer")]},
]
# A plain turn (the title answer second), then a turn whose command writes a file: under Read Only it is refused.
PERMISSIONS_SCRIPT = [
    {"output": [message("first answer")]},
    {"output": [message('{"title":"Read only"}')]},
    {"output": [exec_call("w1", "printf hi > out.txt")]},
    {"output": [message("after the write")]},
]
# The selected row of the /model picker: "› 1. GPT-6.1-Sol    Latest workhorse model ..." (rows after the ninth
# have no number: "›     GPT-5.6-Luna  Legacy fast model ...").
MODEL_PICKER = "Select Model and Effort"
MODEL_ROW = re.compile(r"^\s*›\s+(?:(\d+)\.\s+)?(\S.*?)\s{2,}(\S.*?)\s*$")
# A row of the /resume picker: "  › 20s ago     Write file" (a ● before the name marks unread activity).
SESSION_ROW = re.compile(r"^\s+(?:›\s+)?(\d+[smhd] ago|now|just now)\s{2,}(\S.*?)\s*$")
# The status line of a thread titled "Write file" (the title comes last, after the cwd).
TITLED = re.compile(re.escape(READY) + r".* · Write file$", re.M)
RESUME_HINT = re.compile(r"codex --remote \S+ resume ([0-9a-f-]{36})")
# The calc MCP server (tests/support/mcp_calc_server.py) over stdio, configured on the app-server's side, and what
# /mcp verbose shows of it (Codex's app-server shows the same: the Codex-server variant proves the lines).
MCP_CONFIG = (f"[mcp_servers.calc]\ncommand = {json.dumps(sys.executable)}\n"
              f"args = [{json.dumps(str(CALC_SERVER))}, \"stdio\"]\n")
MCP_HEADING = "MCP Tools"
MCP_LINES = ("• calc: connected (5 tools)", "• Tools: add, describe, echo, fail, slow",
             "• Resources: greeting (calc://greeting)")
# The TUI releases a test runs with; SLOW_0171 and SLOW_0169 leave one of them to PYCODEX_SLOW=1 runs.
BOTH = ["0.169.0", "0.171.0"]
SLOW_0171 = ["0.169.0", pytest.param("0.171.0", marks=pytest.mark.slow)]
SLOW_0169 = [pytest.param("0.169.0", marks=pytest.mark.slow), "0.171.0"]


@pytest.fixture
def tui(tmp_path: Path) -> Any:
    require_tmux()
    session = Tui(f"pycodex-tui-{os.getpid()}", tmp_path)
    yield session
    session.close()


@pytest.fixture
def tui_bin(request: pytest.FixtureRequest) -> Path:
    """The Codex binary of the TUI release the test is parametrized with; a Codex server runs the same one."""
    return tui_binary(request)


# The TUI against Codex's own app-server proves the scripted steps and screens (the test's expectations), not
# pycodex: it runs with PYCODEX_SLOW=1; the pycodex server stays in the default run.
@pytest.fixture(params=["pycodex", pytest.param("codex", marks=pytest.mark.slow)])
def server_kind(request: Any) -> str:
    return str(request.param)


def _client(remote: Remote, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The TUI's environment (its own CODEX_HOME) and working directory."""
    client_home = tmp_path / "client_home"
    model_config(client_home, remote.model.url, approval_policy="on-request")
    env = {"CODEX_HOME": str(client_home), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
           "HOME": str(tmp_path)}
    cwd = tmp_path / "client_cwd"
    cwd.mkdir(exist_ok=True)
    return env, cwd


def _no_errors(screen: str) -> None:
    assert not error_lines(screen), screen


def _no_unsupported_methods(remote: Remote) -> None:
    """pycodex answered no request with -32601. Codex 0.169's app-server keeps no record of its answers, so the
    check reads pycodex's `--trace` file only (the same steps passing against Codex prove the TUI's side)."""
    if remote.trace is None:
        return
    text = remote.trace.read_text()
    assert '"model/list"' in text, "the trace holds no TUI traffic"  # the check below would prove nothing
    assert unsupported_answers(remote.trace) == [], "pycodex answered these TUI requests with -32601"


def _thread_id(remote: Remote) -> str:
    """The main thread's id, from the session header the model saw on the first request."""
    first = remote.model.requests()[0]
    found = first["headers"].get("session-id") or first["headers"].get("session_id")
    assert found, first["headers"]
    return str(found)


async def _ready(tui: Tui) -> str:
    return await tui.wait_until("the composer with its status line", lambda s: PROMPT in s and READY in s)


async def _model_requests(remote: Remote, count: int, timeout: float = 60.0) -> None:
    """Wait (bounded) until the fake model has received `count` requests."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(remote.model.requests()) < count:
        if loop.time() >= deadline:
            raise AssertionError(f"the model got {len(remote.model.requests())} requests, not {count}, in {timeout} s")
        await asyncio.sleep(0.1)


async def _approve(tui: Tui, attempts: int = 5) -> None:
    """Press "y" on the approval prompt; a key sent while the TUI is still drawing the prompt can be lost, so
    press again (a bounded number of times) while the prompt is still shown."""
    for _ in range(attempts):
        tui.key("y")
        try:
            await tui.wait_for("You approved", timeout=4)
            return
        except AssertionError:
            if "Would you like to run the following command?" not in tui.screen():
                return
    raise AssertionError(f"the approval was not taken after {attempts} presses:\n{tui.screen()}")


def _session_rows(screen: str) -> list[str]:
    return [m.group(2) for line in screen.splitlines() if (m := SESSION_ROW.match(line))]


async def _model_rows(tui: Tui, limit: int = 40) -> list[tuple[str, str]]:
    """Every row of the open /model picker, in order: it shows eight at a time and numbers only the first nine,
    so walk the selection down through the list (it wraps back to row 1 at the end) and collect the selected
    rows on the way."""

    def selected(screen: str) -> tuple[str, tuple[str, str]] | None:
        picker = screen.split(MODEL_PICKER)[-1] if MODEL_PICKER in screen else ""
        for line in picker.splitlines():
            if m := MODEL_ROW.match(line):
                return m.group(1) or "", (m.group(2), m.group(3))
        return None

    first = selected(await tui.wait_until("row 1 selected", lambda s: (selected(s) or ("",))[0] == "1"))
    assert first is not None
    rows = [first[1]]

    def moved(screen: str) -> bool:
        now = selected(screen)
        return now is not None and now[1] != rows[-1]

    for _ in range(limit):
        tui.key("Down")
        now = selected(await tui.wait_until("the next picker row", moved))
        assert now is not None
        if now == first:
            return rows
        rows.append(now[1])
    raise AssertionError(f"the /model picker did not wrap within {limit} rows:\n{tui.screen()}")


@pytest.mark.parametrize("tui_bin", BOTH, indirect=True)
async def test_tui_runs_an_approved_command_and_resumes_the_session(
    tui: Tui, server_kind: str, tui_bin: Path, tmp_path: Path
) -> None:
    async with remote_app_server(server_kind, APPROVAL_SCRIPT, tui_bin, tmp_path) as remote:
        env, cwd = _client(remote, tmp_path)
        tui.start([str(tui_bin), "--remote", remote.url], env, cwd)
        await _ready(tui)
        await tui.submit("write the file")
        try:
            await tui.wait_for("Would you like to run the following command?")
        except AssertionError as exc:  # say which thread got which scripted answer (title and main race)
            order = [(r["headers"].get("thread-id"), bool((r["body"] or {}).get("text")))
                     for r in remote.model.requests()]
            raise AssertionError(f"{exc}\nmodel requests (thread, structured): {order}") from None
        # The title thread has asked the model before the approval lets the main turn ask again: the follow-up
        # request cannot take the title's scripted answer.
        await _model_requests(remote, 2)
        await _approve(tui)
        _no_errors(await tui.wait_for("done writing"))
        # The generated title, at the end of the status line (0.169 shows the cwd there as ~/..., 0.171 in full).
        await tui.wait_until("the title in the status line", lambda s: bool(TITLED.search(s)))

        # `resume <id>`: a new TUI process shows the earlier turn.
        thread_id = _thread_id(remote)
        tui.close()
        tui.start([str(tui_bin), "--remote", remote.url, "resume", thread_id], env, cwd)
        screen = await tui.wait_for("done writing")
        assert "write the file" in screen and "printf hi > out.txt" in screen, screen
        _no_errors(await _ready(tui))

        # The /resume picker of a fresh TUI lists the titled session (only it: the fresh TUI's own empty
        # thread is not a session yet) and choosing it shows the earlier turn.
        tui.close()
        tui.start([str(tui_bin), "--remote", remote.url], env, cwd)
        await _ready(tui)
        await tui.submit("/resume")
        screen = await tui.wait_until("a session in the /resume picker", lambda s: bool(_session_rows(s)))
        assert "Resume a previous session" in screen, screen
        assert _session_rows(screen) == ["Write file"], screen
        tui.key("Enter")
        screen = await tui.wait_for("done writing")
        assert "write the file" in screen and "printf hi > out.txt" in screen, screen
        _no_errors(await _ready(tui))
    _no_unsupported_methods(remote)  # the server has stopped: its trace is complete, from startup on


@pytest.mark.parametrize("tui_bin", SLOW_0171, indirect=True)
async def test_tui_compacts_forks_lists_the_models_and_exits(
    tui: Tui, server_kind: str, tui_bin: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with remote_app_server(server_kind, COMPACT_SCRIPT, tui_bin, tmp_path) as remote:
        env, cwd = _client(remote, tmp_path)
        tui.start([str(tui_bin), "--remote", remote.url], env, cwd)
        await _ready(tui)
        await tui.submit("first prompt")
        await tui.wait_for("first answer")
        await tui.wait_for("· Two turns")  # the title thread has had its answer: no more title requests
        await tui.submit("second prompt")
        await tui.wait_for("second answer")

        # /compact: the model gets the compaction request, and the turn after it sees the summary it wrote.
        await tui.submit("/compact")
        await tui.wait_for("Context compacted")
        await tui.submit("third prompt")
        _no_errors(await tui.wait_for("third answer"))
        requests = remote.model.requests()
        assert len(requests) == 5, [r["body"].get("input", [])[-1:] for r in requests]
        main = _thread_id(remote)
        assert {r["headers"].get("session-id") for r in requests[2:]} == {main}, "compaction left the thread"
        assert SUMMARY not in str(requests[3]["body"]["input"])
        assert SUMMARY in str(requests[4]["body"]["input"]), "the turn after /compact lacks the summary"

        # /fork: a new thread, forked from the titled one, showing the earlier turns and the compaction.
        await tui.submit("/fork")
        screen = await tui.wait_for("Fork created")
        assert f"Thread forked from Two turns ({main})" in screen, screen
        for text in ("first prompt", "first answer", "second answer", "Context compacted", "third answer"):
            assert text in screen, (text, screen)
        _no_errors(screen)

        # The /resume picker lists the fork and its source, both read (no ● unread mark: the user made the fork).
        await tui.submit("/resume")
        screen = await tui.wait_until("two sessions in the /resume picker", lambda s: len(_session_rows(s)) == 2)
        assert _session_rows(screen) == ["Two turns", "Two turns"], screen
        tui.key("Escape")
        await _ready(tui)

        # /model: every model of the server's catalog, in its order: Codex's own, or for pycodex Codex 0.169's.
        await tui.submit("/model")
        await tui.wait_for("Select Model and Effort")
        catalog = tui_bin if server_kind == "codex" else Path(request.getfixturevalue("codex_bin"))
        assert await _model_rows(tui) == catalog_rows(catalog)
        tui.key("Escape")
        await _ready(tui)

        # /quit: the TUI ends cleanly and says how to come back to the (forked) thread.
        await tui.submit("/quit")
        status = await tui.exit_status()
        screen = tui.screen()
        assert status == "0", screen
        hint = RESUME_HINT.search(screen)
        assert hint is not None and hint.group(1) != main, screen
        # The fork (made with excludeTurns) had no usage report of its own, so the TUI prints no usage line.
        assert "Token usage so far" not in screen, screen
    _no_unsupported_methods(remote)


@pytest.mark.parametrize("tui_bin", SLOW_0171, indirect=True)
async def test_tui_read_only_permissions_refuse_the_next_write(
    tui: Tui, server_kind: str, tui_bin: Path, tmp_path: Path
) -> None:
    async with remote_app_server(server_kind, PERMISSIONS_SCRIPT, tui_bin, tmp_path) as remote:
        env, cwd = _client(remote, tmp_path)
        tui.start([str(tui_bin), "--remote", remote.url], env, cwd)
        await _ready(tui)
        await tui.submit("first prompt")
        await tui.wait_for("first answer")
        await tui.wait_for("· Read only")  # the title thread has had its answer

        await tui.submit("/permissions")
        await tui.wait_for("Update Model Permissions")
        # The footer is drawn once the list takes keys: a key sent before that is lost under load.
        await tui.wait_for("enter select")
        screen = await tui.select_row(4)  # from the current "1. Ask for approval"
        assert re.search(r"›\s*4\. Read Only", screen), screen
        tui.key("Enter")
        await tui.wait_for("Permission selection requested: Read Only")
        await _ready(tui)
        await tui.submit("/status")
        await tui.wait_until("/status with Read Only", lambda s: bool(re.search(r"Permissions:\s+Read Only", s)))

        await tui.submit("write the file")
        screen = await tui.wait_for("after the write")
        assert "Queued follow-up inputs" not in screen, screen
        _no_errors(screen)
        workspace = tmp_path / "server_cwd"
        assert not (workspace / "out.txt").exists(), "the write went through under Read Only"
        outputs = [i["output"] for r in remote.model.requests() for i in r["body"].get("input", [])
                   if i.get("type") == "function_call_output" and i.get("call_id") == "w1"]
        assert outputs and "Process exited with code 1" in outputs[-1], outputs
        assert "out.txt" in outputs[-1], outputs  # the shell's refusal names the file
    _no_unsupported_methods(remote)


@pytest.mark.parametrize("tui_bin", SLOW_0169, indirect=True)
async def test_tui_mcp_lists_the_configured_server_with_its_tools(
    tui: Tui, server_kind: str, tui_bin: Path, tmp_path: Path
) -> None:
    script = {"responses": [{"output": [message("unused")]}], "when_exhausted": "repeat_last"}
    async with remote_app_server(server_kind, script, tui_bin, tmp_path, config_extra=MCP_CONFIG) as remote:
        env, cwd = _client(remote, tmp_path)
        tui.start([str(tui_bin), "--remote", remote.url], env, cwd)
        await _ready(tui)
        # /mcp shows the inventory of the moment: asked while the server is still starting it shows it starting,
        # so ask again (a bounded number of times) until it is connected. Each answer is a new "MCP Tools" block.
        for asked in range(1, 6):
            await tui.submit("/mcp verbose")
            screen = await tui.wait_until(f"/mcp answer {asked}", lambda s, n=asked: s.count(MCP_HEADING) >= n)
            inventory = screen.split(MCP_HEADING)[-1]
            if MCP_LINES[0] in inventory:
                break
        for line in MCP_LINES:
            assert line in inventory, (line, screen)
        _no_errors(screen)
    _no_unsupported_methods(remote)
