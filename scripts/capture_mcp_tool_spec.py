"""Record what Codex sends the model for a stdio MCP server: the `namespace` tool and call outputs.

Runs `codex exec` against fixtures/fake_responses_server.py with tests/support/mcp_calc_server.py
configured as `[mcp_servers.calc]`; the model calls `mcp__calc.add` , `echo` and `fail` (pre-approved) and
`slow` (not approved, so refused under approval_policy = "never"). Writes tests/data/mcp/codex_0169_calc.json.

    python scripts/capture_mcp_tool_spec.py PATH/TO/codex
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.manifest import write_recording

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "mcp" / "codex_0169_calc.json"


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "namespace": "mcp__calc",
            "name": name, "arguments": json.dumps(args), "status": "completed"}
    return {"events": [
        {"type": "response.created", "response": {"id": f"resp_{call_id}"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": f"resp_{call_id}", "usage": {
            "input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}}},
    ]}


def main(codex: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        script = Path(tmp) / "script.json"
        log = Path(tmp) / "requests.jsonl"
        script.write_text(json.dumps([
            _call("call_add", "add", {"a": 2, "b": 3}),
            _call("call_echo", "echo", {"text": "hi"}),
            _call("call_fail", "fail", {}),
            _call("call_slow", "slow", {}),
            {"output": [{"type": "message", "text": "done"}]},
        ]))
        fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script),
                                 "--log", str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout is not None
            port = int(fake.stdout.readline())
            (home / "config.toml").write_text(
                'model = "mock-model"\napproval_policy = "never"\nsandbox_mode = "read-only"\n'
                'model_provider = "mock"\n[model_providers.mock]\nname = "mock"\n'
                f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
                'request_max_retries = 0\nstream_max_retries = 0\n'
                f'[mcp_servers.calc]\ncommand = {json.dumps(sys.executable)}\n'
                f'args = [{json.dumps(str(ROOT / "tests" / "support" / "mcp_calc_server.py"))}, "stdio"]\n'
                'required = true\n'  # the turn waits for it (optional servers get only a 1 s grace)
                '[mcp_servers.calc.tools.add]\napproval_mode = "approve"\n'
                '[mcp_servers.calc.tools.echo]\napproval_mode = "approve"\n'
                '[mcp_servers.calc.tools.fail]\napproval_mode = "approve"\n'
            )
            env = {**os.environ, "CODEX_HOME": str(home)}
            subprocess.run([codex, "exec", "--skip-git-repo-check", "--json", "add things"], env=env, cwd=tmp,
                           timeout=120, stdin=subprocess.DEVNULL, check=False)
        finally:
            fake.terminate()
            fake.wait(10)
        requests = [json.loads(line)["body"] for line in log.read_text().splitlines()]
    first = requests[0]
    namespace = next(t for t in first["tools"] if t.get("name") == "mcp__calc")
    outputs = [item for item in requests[-1]["input"] if item.get("type") == "function_call_output"]
    calls = [item for item in requests[-1]["input"] if item.get("type") == "function_call"]
    write_recording(OUT, {"codex": "0.169.0", "namespace_tool": namespace, "calls": calls, "outputs": outputs},
                    indent=2)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
