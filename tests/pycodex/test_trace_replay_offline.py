"""``pycodex trace replay --server current`` of traces recorded on the offline `scripted` model: the replayed
server runs on the same model, script and config warnings as the recording, whatever the replaying shell
holds (an API key, another ``PYCODEX_SCRIPT``), so an unchanged build shows no divergence."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.remote import STEP, AppServerLines, codex_env, process

#: What the replaying shell holds and the recording did not: each would change the server's provider
#: (a key selects `openai`) or its answers (another script).
HOSTILE = {"OPENAI_API_KEY": "sk-replay-shell-key", "CODEX_API_KEY": "sk-replay-shell-key"}
FAKE_SCRIPT = {"responses": [
    [{"type": "function_call", "name": "exec_command", "arguments": {"cmd": "printf scripted-ran"}}],
    [{"type": "message", "text": "the fake model is done", "deltas": ["the fake ", "model is done"]}],
]}
OTHER_SCRIPT = {"responses": [[{"type": "message", "text": "a different answer"}]]}


def events(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]


def sent(trace: Path, method: str) -> list[dict[str, Any]]:
    return [e["msg"] for e in events(trace)
            if e.get("channel") == "client" and e.get("dir") == "out" and e.get("msg", {}).get("method") == method]


async def replay(trace: Path, env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pycodex", "trace", "replay", str(trace), "--server", "current", "--timeout", "20",
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), STEP * 2)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def record_scripted_turn(tmp_path: Path, script: Path) -> Path:
    """A turn on the scripted model playing ``script`` (named in config.toml: it runs only when asked for)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    trace = tmp_path / "scripted.trace"
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text('model_provider = "scripted"\n', encoding="utf-8")
    env = codex_env(tmp_path / "home", PYCODEX_SCRIPT=str(script))
    for var in ("OPENAI_API_KEY", "PYCODEX_TRACE"):
        env.pop(var, None)
    argv = [sys.executable, "-m", "pycodex", "app-server", "--trace", str(trace)]
    async with process(argv, env, tmp_path, pipes=True) as app:
        rpc = AppServerLines(app)
        await rpc.call(1, "initialize", {"clientInfo": {"name": "replay-test", "version": "0"}})
        await rpc.notify("initialized")
        thread = await rpc.call(2, "thread/start", {"cwd": str(workspace)})
        assert thread["modelProvider"] == "scripted"
        await rpc.call(3, "turn/start", {"threadId": thread["thread"]["id"],
                                         "input": [{"type": "text", "text": "go"}]})
        await rpc.wait_for_notification("turn/completed")
        app.stdin.close()
        await asyncio.wait_for(app.wait(), STEP)
    return trace


async def test_a_scripted_model_trace_replays_with_no_divergence_whatever_the_shell_holds(tmp_path: Path) -> None:
    script = tmp_path / "fake_model.json"
    script.write_text(json.dumps(FAKE_SCRIPT), encoding="utf-8")
    trace = await record_scripted_turn(tmp_path, script)
    completed = [m["params"]["item"] for m in sent(trace, "item/completed")]
    assert any(i.get("aggregatedOutput") == "scripted-ran" for i in completed), completed
    script.unlink()  # the replay plays the script the trace noted, not a file that may be gone or changed
    other = tmp_path / "other.json"
    other.write_text(json.dumps(OTHER_SCRIPT), encoding="utf-8")
    shell = codex_env(tmp_path / "unused") | HOSTILE | {"PYCODEX_SCRIPT": str(other)}
    code, out, err = await replay(trace, shell)
    assert (code, out) == (0, "no divergence\n"), err[-2000:]


async def test_the_offline_demo_trace_replays_with_no_divergence(tmp_path: Path) -> None:
    trace = tmp_path / "demo.trace"
    env = codex_env(tmp_path / "home") | {"PYCODEX_TRACE": str(trace)}
    demo = await asyncio.create_subprocess_exec(sys.executable, "-m", "pycodex", "demo", "--local", env=env,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = await asyncio.wait_for(demo.communicate(), STEP * 2)
    finally:
        if demo.returncode is None:
            demo.kill()
            await demo.wait()
    assert demo.returncode == 0, err.decode()[-2000:]
    started = json.dumps(sent(trace, "item/started"))
    assert '"processId": "' in started  # its command ran, in a workspace the demo has deleted since
    code, out, err_text = await replay(trace, codex_env(tmp_path / "unused") | HOSTILE)
    assert (code, out) == (0, "no divergence\n"), err_text[-2000:]
