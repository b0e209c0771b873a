"""Record a CODEX_HOME written by a pycodex release, for the test that the new build opens it with nothing lost.

Runs the release's own app-server (a checkout of its commit, e.g. a `git worktree add --detach DIR COMMIT`)
with the fake model: a thread with a plain turn, a command turn and a name; a second thread with one turn that
is forked (one more turn on the fork) and then archived. Keeps the rollouts, the release's index and its own
thread/read + thread/list answers, with the home and work folders replaced by @HOME@ / @WORK@, in
tests/data/storage/pycodex_<version>/.

    python scripts/capture_release_store.py 0.1.0 /path/to/checkout-of-cdeac09
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.capture_codex_storage import DATA, PYTHON, ROOT, Client, _config
from scripts.manifest import record_in_manifest


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": args, "call_id": call_id}


RESPONSES = [["hello there"], [_call("exec_command", {"cmd": "echo hi"}, "call_exec")], ["ran it"],
             ["second thread"], ["fork answer"]]


async def _turn(client: Client, thread_id: str, text: str) -> None:
    await client.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]})
    await client.until("turn/completed")


async def _drive(checkout: Path, home: Path, work: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX", "PYCODEX"))}
    env.update(CODEX_HOME=str(home), PYTHONPATH=str(checkout))
    proc = await asyncio.create_subprocess_exec(
        PYTHON, "-m", "pycodex", "app-server", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env, cwd=str(work), limit=1 << 24)
    client = Client(proc)
    try:
        await client.request("initialize", {"clientInfo": {"name": "storage-probe", "version": "1"},
                                            "capabilities": {"experimentalApi": True}})
        await client.notify("initialized")
        first = (await client.request("thread/start", {"cwd": str(work)}))["thread"]["id"]
        await _turn(client, first, "say hello")
        await _turn(client, first, "run it")
        await client.request("thread/name/set", {"threadId": first, "name": "old thread"})
        second = (await client.request("thread/start", {"cwd": str(work)}))["thread"]["id"]
        await _turn(client, second, "another")
        fork = (await client.request("thread/fork", {"threadId": second}))["thread"]["id"]
        await _turn(client, fork, "in the fork")
        await client.request("thread/archive", {"threadId": second})
        reads = {t: await client.request("thread/read", {"threadId": t, "includeTurns": True})
                 for t in (first, second, fork)}
        listed = await client.request("thread/list", {})
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 30)
    return {"reads": reads, "list": listed}


def main(version: str, checkout: Path) -> None:
    """Record the release's store into tests/data/storage/pycodex_<version>/."""
    out = DATA / f"pycodex_{version.replace('.', '_')}"
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps(RESPONSES))
        fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout is not None
            (home / "config.toml").write_text(_config(int(fake.stdout.readline()), []))
            answers = asyncio.run(_drive(checkout, home, work))
        finally:
            assert fake.stdin is not None
            fake.stdin.close()
            fake.wait(10)
        shutil.rmtree(out, ignore_errors=True)
        written = []
        for path in sorted(home.rglob("*")):
            relative = path.relative_to(home)
            if not path.is_file() or relative.parts[0] not in ("sessions", "archived_sessions", "state_pycodex.sqlite"):
                continue
            target = out / "home" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".jsonl":
                target.write_text(path.read_text().replace(str(home), "@HOME@").replace(str(work), "@WORK@"))
            else:
                shutil.copy2(path, target)  # the release's index: its paths are stale on purpose
            written.append(target)
        text = json.dumps(answers, indent=1).replace(str(home), "@HOME@").replace(str(work), "@WORK@")
        (out / "answers.json").write_text(text + "\n")
        written.append(out / "answers.json")
    record_in_manifest(*written)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]).resolve())
