"""``--trace`` and ``pycodex trace show|html|replay`` on a recorded session: a turn with an approval whose
command runs on an executor reached through the relay, and a second plain turn."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import REPO_ROOT
from tests.support.remote import TOKEN
from tests.support.tools import require_chromium
from tests.support.trace_session import API_KEY, OUTPUT, recorded_session

STEP = 60


def pycodex(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycodex", *args], capture_output=True, text=True,
                          timeout=STEP * 2, env=env, check=False)


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("trace")

    async def record() -> Path:
        async with recorded_session(tmp) as recorded:
            return recorded.trace

    yield asyncio.run(record())


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_trace_holds_every_channel_in_both_directions_in_time_order(trace: Path) -> None:
    recorded = events(trace)
    assert recorded[0]["dir"] == "meta" and recorded[0]["summary"]["format"] == 1
    seen = {(e["channel"], e["dir"]) for e in recorded}
    for channel in ("client", "model", "exec", "approval"):
        assert {(channel, "in"), (channel, "out")} <= seen, channel
    times = [e["t"] for e in recorded]
    assert times == sorted(times)
    # The exec-server traffic went through the relay encrypted; the trace has it after decryption.
    started = [e["msg"] for e in recorded if e["channel"] == "exec" and e["msg"].get("method") == "process/start"]
    assert started and "printf" in " ".join(started[0]["params"]["argv"])
    methods = [e["msg"].get("method") for e in recorded if e["channel"] == "client" and e["dir"] == "in"]
    assert methods[:4] == ["initialize", "initialized", "thread/start", "turn/start"]
    sse = [e["msg"]["type"] for e in recorded if e["channel"] == "model" and e["dir"] == "in"]
    assert sse.count("response.completed") == 3


def test_the_trace_holds_no_credentials(trace: Path) -> None:
    text = trace.read_text()
    for canary in (API_KEY, TOKEN):
        assert canary not in text
    assert not re.search(r"(?i)bearer (?!\[REDACTED\])", text)
    requests = [e["msg"] for e in events(trace) if e["channel"] == "model" and e["dir"] == "out"]
    assert requests and all(r["headers"]["authorization"] == "[REDACTED]" for r in requests)


def test_show_prints_a_coloured_timeline(trace: Path) -> None:
    shown = pycodex("trace", "show", str(trace), env=os.environ | {"FORCE_COLOR": "1", "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown.stdout)
    assert "\x1b[" in shown.stdout
    for text in ("turn/start", "item/commandExecution/requestApproval", "model round trip",
                 "tool call commandExecution", "-> accept", "exec process/start", "no errors"):
        assert text in plain, text
    assert plain.count("turn ") >= 2


def test_show_highlights_errors(trace: Path, tmp_path: Path) -> None:
    broken = tmp_path / "error.trace"
    lines = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event["channel"] == "client" and event["dir"] == "out" and event["msg"].get("id") == 4:
            event["msg"] = {"id": 4, "error": {"code": -32600, "message": "turn refused for the test"}}
        lines.append(json.dumps(event))
    broken.write_text("\n".join(lines) + "\n")
    shown = pycodex("trace", "show", str(broken), env=os.environ | {"FORCE_COLOR": "1", "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    red = [line for line in shown.stdout.splitlines() if "turn refused for the test" in line]
    assert red and all("\x1b[31m" in line or "\x1b[1;31m" in line for line in red)
    assert "1 error(s)" in re.sub(r"\x1b\[[0-9;]*m", "", shown.stdout)


def test_show_json_is_the_same_timeline(trace: Path) -> None:
    shown = pycodex("trace", "show", "--json", str(trace))
    assert shown.returncode == 0, shown.stderr
    timeline = json.loads(shown.stdout)
    first, second = timeline["turns"]
    assert first["status"] == second["status"] == "completed"
    assert [m["output"] for m in first["model"]] == [["function_call"], ["message"]]
    [approval] = first["approvals"]
    assert approval["decision"] == "accept" and approval["waited"] is not None
    [tool] = [i for i in first["items"] if i["tool"]]
    assert tool["type"] == "commandExecution" and OUTPUT in tool["label"] and tool["end"] >= tool["start"]
    assert [c["method"] for c in first["exec"]] == ["process/start"]
    assert second["approvals"] == [] and len(second["model"]) == 1
    assert all(r["latency"] is not None for r in timeline["requests"])
    assert timeline["errors"] == []


def test_html_page_renders_every_turn_in_headless_chromium(trace: Path, tmp_path: Path) -> None:
    browser = require_chromium()
    page = tmp_path / "out.html"
    made = pycodex("trace", "html", str(trace), "-o", str(page))
    assert made.returncode == 0, made.stderr
    assert "http://" not in page.read_text().split("<script")[0]  # no external resources
    dumped = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=STEP, check=False)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    console = [line for line in dumped.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    assert 'data-render="ok"' in dumped.stdout
    turn_ids = [t["id"] for t in json.loads(pycodex("trace", "show", "--json", str(trace)).stdout)["turns"]]
    rendered = re.findall(r'<section class="turn" data-turn-id="([^"]+)"', dumped.stdout)
    assert rendered == turn_ids and len(rendered) == 2


async def test_replay_finds_no_divergence_on_current_and_names_a_renamed_field(tmp_path: Path) -> None:
    async with recorded_session(tmp_path, via_env=True) as recorded:
        assert recorded.trace.is_file()  # $PYCODEX_TRACE works like --trace
        env = recorded.env | {"PYCODEX_BROKEN_WRAPS": f"{sys.executable} -m pycodex"}

        async def replay(spec: str) -> tuple[int, str, str]:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "pycodex", "trace", "replay", str(recorded.trace), "--server", spec,
                "--timeout", "20", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(), STEP * 2)
            assert proc.returncode is not None
            return proc.returncode, out.decode(), err.decode()

        code, out, err = await replay("current")
        assert (code, out) == (0, "no divergence\n"), err[-2000:]
        broken = REPO_ROOT / "compat_tests" / "broken" / "rename_field"
        code, out, err = await replay(f"path:{broken}")
        assert code == 1, err[-2000:]
        assert out.count("\n") == 1
        assert re.match(r"item/(started|completed): params\.item\.aggregatedOutput: missing", out), out


def test_one_line_errors(tmp_path: Path) -> None:
    missing = pycodex("trace", "show", str(tmp_path / "none.trace"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "cannot read" in missing.stderr
    (tmp_path / "bad.trace").write_text("not json\n")
    bad = pycodex("trace", "html", str(tmp_path / "bad.trace"), "-o", str(tmp_path / "x.html"))
    assert bad.returncode == 2 and "bad.trace:1: not a JSON line" in bad.stderr
    (tmp_path / "binary.trace").write_bytes(b'{"t": 0}\n\xff\xfe binary\n')
    binary = pycodex("trace", "show", str(tmp_path / "binary.trace"))
    assert binary.returncode == 2 and binary.stderr.count("\n") == 1, binary.stderr
    assert "binary.trace:2: not UTF-8 text" in binary.stderr
    (tmp_path / "ok.trace").write_text(json.dumps({"t": 0, "dir": "meta", "channel": "trace", "conn": 0}) + "\n")
    spec = pycodex("trace", "replay", str(tmp_path / "ok.trace"), "--server", "nonsense")
    assert spec.returncode == 2 and spec.stderr.count("\n") == 1, spec.stderr
    server = subprocess.run(
        [sys.executable, "-m", "pycodex", "app-server", "--trace", str(tmp_path / "no" / "dir" / "t.jsonl")],
        input="", capture_output=True, text=True, timeout=STEP, env=os.environ | {"CODEX_HOME": str(tmp_path)},
        check=False)
    assert server.returncode == 1 and server.stderr.strip().startswith("Error: cannot write the trace file")
    assert "Traceback" not in server.stderr
