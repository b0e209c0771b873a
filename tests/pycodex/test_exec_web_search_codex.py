"""``pycodex exec --json`` prints a hosted web search like ``codex exec --json`` (same scripted turn, same
fake Responses server). Codex writes the item's id twice (its own and the call's); the ids are not compared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = [{"output": [{"type": "web_search_call", "id": "ws_1", "status": "completed",
                       "action": {"type": "search", "query": "weather paris"}},
                      {"type": "message", "text": "done"}]}]


def _run(argv: list[str], tmp: Path) -> list[dict[str, Any]]:
    home = tmp / "home"
    home.mkdir()
    (tmp / "s.json").write_text(json.dumps(SCRIPT))
    fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(tmp / "s.json")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert fake.stdout is not None
        port = int(fake.stdout.readline())
        (home / "config.toml").write_text(
            'model = "gpt-5.5"\napproval_policy = "never"\nsandbox_mode = "workspace-write"\n'
            'model_provider = "mock"\n[model_providers.mock]\nname = "mock"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\nrequest_max_retries = 0\n'
            "stream_max_retries = 0\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX"))}
        env.update(CODEX_HOME=str(home), PYTHONPATH=str(ROOT))
        done = subprocess.run([*argv, "exec", "--skip-git-repo-check", "--json", "hi"], env=env, cwd=tmp,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False)
    finally:
        assert fake.stdin is not None
        fake.stdin.close()
        fake.wait(10)
        if fake.stdout is not None:
            fake.stdout.close()
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [{"event": e["type"], **{k: v for k, v in e["item"].items() if k != "id"}}
            for e in events if isinstance(e.get("item"), dict) and e["item"].get("type") == "web_search"]


@pytest.mark.codex
def test_exec_json_web_search_matches_codex(codex_bin: str, tmp_path: Path) -> None:
    (tmp_path / "codex").mkdir()
    (tmp_path / "py").mkdir()
    theirs = _run([codex_bin], tmp_path / "codex")
    ours = _run([sys.executable, "-m", "pycodex"], tmp_path / "py")
    assert theirs == [
        {"event": "item.started", "type": "web_search", "query": "", "action": {"type": "other"}},
        {"event": "item.completed", "type": "web_search", "query": "weather paris", "action": {"type": "search", "query": "weather paris"}},
    ]
    assert ours == theirs
