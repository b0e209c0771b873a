"""Config keys only Codex's terminal UI reads, and the rule for them (issue 12): every key Codex documents is
honoured or refused, none silently ignored, and an unknown key gets a warning that names it.

* Keys only the TUI reads (`[tui]` and its contents, `file_opener`, `notice`, `check_for_update_on_startup`,
  `disable_paste_burst`, `history`) are accepted without a warning, as Codex accepts them: pycodex has no TUI,
  and a Codex TUI run against pycodex (`codex --remote`) reads them itself.
* `hide_agent_reasoning` is honoured by `pycodex exec` as by `codex exec`: no reasoning in the transcript,
  while the JSON events keep it.
* `notify` is run by the app-server after each completed turn with Codex's JSON payload.
* A misspelt key gets Codex's "unrecognized configuration setting" warning naming it.
The same checks run against the binary (its warnings arrive as `warning` at thread start)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import message, run_turn
from tests.support.procs import NEW_GROUP, kill_group

SERVERS = [pytest.param("codex", marks=pytest.mark.codex), "pycodex"]
TUI_KEYS = ("tui", "notifications", "file_opener", "notice", "check_for_update_on_startup", "disable_paste_burst",
            "history", "hide_agent_reasoning")
CONFIG = """model = "mock-model"
model_provider = "m"
file_opener = "cursor"
check_for_update_on_startup = false
disable_paste_burst = true
hide_agent_reasoning = true
notify = ["true"]
bogus_key = 1
[tui]
notifications = true
bogus_tui_key = 2
[notice]
hide_full_access_warning = true
[history]
persistence = "none"
[model_providers.m]
name = "M"
base_url = "{url}"
request_max_retries = 0
stream_max_retries = 0
"""


def _warning_texts(client: Any) -> list[str]:
    return ([n["params"]["summary"] for n in client.notifications("configWarning")]
            + [n["params"]["message"] for n in client.notifications("warning")])


@pytest.mark.parametrize("server", SERVERS)
async def test_tui_keys_are_accepted_and_unknown_ones_named(
    server: str, request: pytest.FixtureRequest, app_server: Any, tmp_path: Path, workspace: Path
) -> None:
    argv = [str(request.getfixturevalue("codex_bin")), "app-server"] if server == "codex" else None
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG.format(url="http://127.0.0.1:9/v1"))
    client = await app_server(argv=argv, codex_home=home)
    await client.call("thread/start", {"cwd": str(workspace)}, timeout=30)
    unknown = await client.wait_notification(
        "configWarning" if server == "pycodex" else "warning",
        lambda p: "unrecognized configuration setting" in (p.get("summary") or p.get("message") or ""), timeout=30)
    text = unknown["params"].get("summary") or unknown["params"]["message"]
    assert text.startswith("Codex is ignoring 1 unrecognized configuration setting.")
    assert text.endswith(f"user ({home / 'config.toml'}): `bogus_key` is ignored.")
    texts = _warning_texts(client)
    assert not [t for t in texts for key in (*TUI_KEYS, "notify") if f"`{key}`" in t or f"`tui.{key}`" in t], texts


@pytest.mark.parametrize("server", SERVERS)
async def test_notify_runs_after_each_completed_turn(
    server: str, request: pytest.FixtureRequest, app_server: Any, fake_model: Any, tmp_path: Path, workspace: Path
) -> None:
    argv = [str(request.getfixturevalue("codex_bin")), "app-server"] if server == "codex" else None
    model = await fake_model({"responses": [{"output": [message("all done")]}], "when_exhausted": "repeat_last"})
    home, out = tmp_path / "home", tmp_path / "notified"
    home.mkdir()
    out.mkdir()
    # The program writes its argument to a file of its own; the file appearing is the test's signal.
    program = [sys.executable, "-c", "import sys, uuid, pathlib; d = pathlib.Path(sys.argv[1]); "
               "(d / (uuid.uuid4().hex + '.tmp')).write_text(sys.argv[2]); "
               "[p.rename(p.with_suffix('.json')) for p in d.glob('*.tmp')]", str(out)]
    (home / "config.toml").write_text(
        f'model = "mock-model"\nmodel_provider = "m"\nnotify = {json.dumps(program)}\n'
        f'[model_providers.m]\nname = "M"\nbase_url = "{model.url}"\nrequest_max_retries = 0\n'
        "stream_max_retries = 0\n")
    client = await app_server(argv=argv, codex_home=home)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=30))["thread"]["id"]
    turn = await run_turn(client, tid, "hello there", timeout=60)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not (found := list(out.glob("*.json"))) and loop.time() < deadline:
        await asyncio.sleep(0.05)  # polling a folder: the program is not ours to signal us
    assert len(found) == 1, "the notify program did not run once"
    assert json.loads(found[0].read_text()) == {
        "type": "agent-turn-complete", "thread-id": tid, "turn-id": turn["id"], "cwd": str(workspace),
        "client": "pycodex_tests", "input-messages": ["hello there"], "last-assistant-message": "all done"}


async def _exec(binary: list[str], home: Path, cwd: Path, *args: str) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "PYCODEX_", "OPENAI_"))}
    env["CODEX_HOME"] = str(home)
    proc = await asyncio.create_subprocess_exec(
        *binary, "exec", "--skip-git-repo-check", *args, "hi", cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, **NEW_GROUP)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        kill_group(proc.pid)
    assert proc.returncode == 0, err.decode()
    return out.decode(), err.decode()


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("hide", [True, False])
async def test_exec_honours_hide_agent_reasoning(
    server: str, hide: bool, request: pytest.FixtureRequest, fake_model: Any, tmp_path: Path, workspace: Path
) -> None:
    binary = [str(request.getfixturevalue("codex_bin"))] if server == "codex" else [sys.executable, "-m", "pycodex"]
    model = await fake_model({"responses": [{"output": [{"type": "reasoning", "summary": ["Pondering deeply"]},
                                                        message("done")]}], "when_exhausted": "repeat_last"})
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'model = "mock-model"\nmodel_provider = "m"\nhide_agent_reasoning = {str(hide).lower()}\n'
        f'[model_providers.m]\nname = "M"\nbase_url = "{model.url}"\nrequest_max_retries = 0\n'
        "stream_max_retries = 0\n")
    _, transcript = await _exec(binary, home, workspace)
    assert ("Pondering deeply" in transcript) is not hide
    assert "done" in transcript
    events, _ = await _exec(binary, home, workspace, "--json")
    reasoning = [json.loads(line)["item"]["text"] for line in events.splitlines()
                 if '"reasoning"' in line and json.loads(line).get("type") == "item.completed"]
    assert reasoning == ["Pondering deeply"]  # the JSON events keep it either way


async def test_hide_agent_reasoning_must_be_a_boolean(app_server: Any, tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('model_provider = "scripted"\nhide_agent_reasoning = "yes"\n')
    client = await app_server(codex_home=home)
    refused = await client.request("thread/start", {"cwd": str(workspace)})
    assert refused["error"]["code"] == -32600
    assert "invalid type: string \"yes\", expected a boolean" in refused["error"]["message"]
