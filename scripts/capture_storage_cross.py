"""Record how each app-server reads a CODEX_HOME the other one wrote, and the open-elsewhere refusal.

For each (writer, reader) pair of Codex 0.169 and pycodex: the writer runs one plain turn and exits; the
reader, on the same CODEX_HOME, answers thread/list, thread/read (with turns) and thread/resume. Then the
writer runs a turn and keeps the thread loaded while the reader tries thread/resume, thread/archive and
thread/name/set (Codex refuses a thread another process writes: "... already has an active writer").
Errors are kept as answered. Writes tests/data/storage/cross_0169.json (normalized like the scenarios).

    python scripts/capture_storage_cross.py PATH/TO/codex
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.capture_codex_storage import DATA, ROOT, Client, _config, server_argv
from scripts.manifest import write_recording
from scripts.storage_normalize import Normalizer

OUT = DATA / "cross_0169.json"


async def _spawn(argv: list[str], home: Path, work: Path) -> Client:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX", "PYCODEX"))}
    env.update(CODEX_HOME=str(home), PYTHONPATH=str(ROOT), RUST_LOG="error")
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env=env, cwd=str(work), limit=1 << 24)
    client = Client(proc)
    await client.request("initialize", {"clientInfo": {"name": "storage-probe", "version": "1"},
                                        "capabilities": {"experimentalApi": True}})
    await client.notify("initialized")
    return client


async def _close(client: Client) -> None:
    if client.proc.stdin is not None:
        client.proc.stdin.close()
    try:
        await asyncio.wait_for(client.proc.wait(), 30)
    except TimeoutError:
        client.proc.kill()
        await client.proc.wait()


async def _turn(client: Client, work: Path) -> str:
    thread_id: str = (await client.request("thread/start", {"cwd": str(work)}))["thread"]["id"]
    await client.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "say hello"}]})
    await client.until("turn/completed")
    return thread_id


async def _attempts(reader: Client, thread_id: str | None, methods: list[tuple[str, dict[str, Any]]]) -> None:
    for method, params in methods:
        try:
            await reader.request(method, {**({} if thread_id is None else {"threadId": thread_id}), **params},
                                 keep=True)
        except RuntimeError:
            pass  # the error answer is kept by the client


async def _pair(writer: list[str], reader: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        home, work = base / "home", base / "work"
        home.mkdir()
        work.mkdir()
        (base / "script.json").write_text(json.dumps({"responses": [["hello there"]],
                                                      "when_exhausted": "repeat_last"}))
        fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"),
                                 str(base / "script.json")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout is not None
            (home / "config.toml").write_text(_config(int(fake.stdout.readline()), []))
            first = await _spawn(writer, home, work)
            closed_id = await _turn(first, work)
            await _close(first)
            second = await _spawn(reader, home, work)
            await _attempts(second, None, [("thread/list", {})])
            await _attempts(second, closed_id, [("thread/read", {"includeTurns": True}), ("thread/resume", {})])
            closed = second.kept
            await _close(second)
            holder = await _spawn(writer, home, work)
            open_id = await _turn(holder, work)
            other = await _spawn(reader, home, work)
            await _attempts(other, open_id, [("thread/resume", {}), ("thread/archive", {}),
                                             ("thread/name/set", {"name": "renamed"})])
            await _close(other)
            await _close(holder)
            opened = other.kept
        finally:
            assert fake.stdin is not None and fake.stdout is not None
            fake.stdin.close()  # the fixture serves until its stdin closes
            fake.wait(10)
            fake.stdout.close()
        norm = Normalizer({str(home): "<HOME>", str(work): "<CWD>", tmp: "<TMP>"}, whole=frozenset({"message"}))
        return {"closed_thread": norm.value(closed), "thread_open_in_writer": norm.value(opened)}


def main(codex: str) -> None:
    """Record both directions and write cross_0169.json."""
    targets = {"codex": server_argv("codex", codex), "pycodex": server_argv("pycodex", None)}
    pairs = {f"{w}_then_{r}": asyncio.run(_pair(targets[w], targets[r])) for w, r in (("codex", "pycodex"),
                                                                                      ("pycodex", "codex"))}
    write_recording(OUT, pairs)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
