"""No silent fake model and no silent new CODEX_HOME, from the command line.

With no provider and no API key, `pycodex exec` (with or without `--json`) and `pycodex mcp-server` fail the
turn with one error that says how to configure a model, and `exec` exits 1: a CI job that lost its secret
goes red. The offline model runs when named (`--model scripted`). A `CODEX_HOME` that names no folder stops
`exec`, `app-server` and `mcp-server` with Codex 0.169's one line (exit status 1) and creates nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from app_server.model.errors import NO_API_KEY

REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 60.0
EXPECTED = NO_API_KEY.format(provider="openai")
#: What the offline model answers (app_server/model/demo_script.json).
SCRIPTED_ANSWER = "I ran `echo hello from pycodex` and it printed: hello from pycodex"


def _env(home: Path) -> dict[str, str]:
    """No key, no provider, no script: only what the test sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_", "PYCODEX_"))}
    return {**env, "CODEX_HOME": str(home), "PYCODEX_FSYNC": "0", "PYTHONPATH": str(REPO)}


def _pycodex(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycodex", *args], cwd=cwd, env=_env(home), text=True,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT_S, check=False)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    return home, work


def test_exec_without_a_key_fails_and_says_how_to_configure_a_model(dirs: tuple[Path, Path]) -> None:
    home, work = dirs
    human = _pycodex("exec", "--skip-git-repo-check", "hi", home=home, cwd=work)
    assert human.returncode == 1
    assert human.stdout == ""
    assert f"ERROR: {EXPECTED}\n" in human.stderr
    assert "scripted` model" not in human.stderr and "Traceback" not in human.stderr

    as_json = _pycodex("exec", "--json", "--skip-git-repo-check", "hi", home=home, cwd=work)
    assert as_json.returncode == 1
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [e["type"] for e in events] == ["thread.started", "turn.started", "error", "turn.failed"]
    assert events[-2]["message"] == EXPECTED and events[-1]["error"] == {"message": EXPECTED}


def test_exec_with_model_scripted_runs_the_offline_model(dirs: tuple[Path, Path]) -> None:
    home, work = dirs
    run = _pycodex("exec", "--model", "scripted", "--skip-git-repo-check", "hi", home=home, cwd=work)
    assert run.returncode == 0, run.stderr
    assert run.stdout == SCRIPTED_ANSWER + "\n"
    assert "provider: scripted\n" in run.stderr


async def test_mcp_server_without_a_key_answers_the_codex_tool_with_the_error(dirs: tuple[Path, Path]) -> None:
    home, work = dirs
    params = StdioServerParameters(command=sys.executable, args=["-m", "pycodex", "mcp-server"], env=_env(home),
                                   cwd=work)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("codex", {"prompt": "hi", "cwd": str(work)})
    text = "".join(block.text for block in result.content if block.type == "text")
    assert result.isError, text
    assert EXPECTED in text and SCRIPTED_ANSWER not in text


@pytest.mark.parametrize(("command", "prefix"), [
    (("exec", "--skip-git-repo-check", "hi"), "Error finding codex home: "),
    (("app-server",), "Error: "),
    (("mcp-server",), "Error finding codex home: "),
])
def test_a_codex_home_that_is_no_folder_stops_the_command_in_one_line(
    tmp_path: Path, command: tuple[str, ...], prefix: str
) -> None:
    missing = tmp_path / "typo"
    run = _pycodex(*command, home=missing, cwd=tmp_path)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f'{prefix}CODEX_HOME points to "{missing}", but that path does not exist\n'
    assert not missing.exists()  # nothing was created
    a_file = tmp_path / "file"
    a_file.write_text("")
    run = _pycodex(*command, home=a_file, cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr == f'{prefix}CODEX_HOME points to "{a_file}", but that path is not a directory\n'
