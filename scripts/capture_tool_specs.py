"""Record the tools Codex offers the model, per model slug and per feature switch.

Runs `codex exec --json` once per case against fixtures/fake_responses_server.py (the model answers
"done") and keeps the first `/v1/responses` request's `tools`, with descriptions dropped: names, types
and parameter shapes are facts of the wire, the descriptions are Codex's prose. Models that Codex drives
in code mode get their tools inside an `additional_tools` input item; that item's tool names are kept, its
whole shape without descriptions (`additional_tools_specs`), where it sits in `input`, and the names of
the nested tools exec's description declares (its `### name` headings: names only, no prose).
Writes tests/data/tools/codex_0169_tools.json.

    python scripts/capture_tool_specs.py PATH/TO/codex
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.manifest import write_recording

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "tools" / "codex_0169_tools.json"

#: (case name, model slug, config lines added to config.toml)
CASES: list[tuple[str, str, list[str]]] = [
    ("gpt-5.5", "gpt-5.5", []),
    ("gpt-5.5-dated", "gpt-5.5-2026-01-01", []),
    ("mock-model", "mock-model", []),
    ("gpt-6.1-sol", "gpt-6.1-sol", []),
    ("gpt-5.6-luna", "gpt-5.6-luna", []),
    ("gpt-6-luna", "gpt-6-luna", []),
    ("gpt-5.6-sol", "gpt-5.6-sol", []),
    ("gpt-5.5 read-only", "gpt-5.5", ['sandbox_mode = "read-only"']),
    ("gpt-5.5 on-request", "gpt-5.5", ['approval_policy = "on-request"']),
    ("gpt-5.5 no goals", "gpt-5.5", ["[features]", "goals = false"]),
    ("gpt-5.5 no view_image", "gpt-5.5", ["[features]", "view_image = false"]),
    ("gpt-5.5 no shell_tool", "gpt-5.5", ["[features]", "shell_tool = false"]),
    ("gpt-5.5 no unified_exec", "gpt-5.5", ["[features]", "unified_exec = false"]),
    ("gpt-5.5 web_search disabled", "gpt-5.5", ['web_search = "disabled"']),
    ("gpt-5.5 web_search live", "gpt-5.5", ['web_search = "live"']),
    ("gpt-5.5 no apply_patch", "gpt-5.5", ["include_apply_patch_tool = false"]),
    ("mock-model no multi_agent", "mock-model", ["[features]", "multi_agent = false"]),
    ("mock-model apply_patch", "mock-model", ["include_apply_patch_tool = true"]),
]


def _strip(value: Any, *, in_properties: bool = False) -> Any:
    """``value`` without description texts (a property that is *named* description stays)."""
    if isinstance(value, dict):
        return {k: _strip(v, in_properties=k == "properties") for k, v in value.items()
                if in_properties or k != "description"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _capture(codex: str, slug: str, extra: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        script, log = Path(tmp) / "script.json", Path(tmp) / "requests.jsonl"
        script.write_text(json.dumps([{"output": [{"type": "message", "text": "done"}]}]))
        fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script),
                                 "--log", str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout is not None
            port = int(fake.stdout.readline())
            split = next((i for i, line in enumerate(extra) if line.startswith("[")), len(extra))
            top, tables = extra[:split], extra[split:]
            lines = [f'model = "{slug}"', *top]
            if not any(line.startswith("approval_policy") for line in top):
                lines.append('approval_policy = "never"')
            if not any(line.startswith("sandbox_mode") for line in top):
                lines.append('sandbox_mode = "workspace-write"')
            lines += ['model_provider = "mock"', "[model_providers.mock]", 'name = "mock"',
                      f'base_url = "http://127.0.0.1:{port}/v1"', 'wire_api = "responses"',
                      "request_max_retries = 0", "stream_max_retries = 0", *tables]
            (home / "config.toml").write_text("\n".join(lines) + "\n")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX"))}
            env["CODEX_HOME"] = str(home)
            subprocess.run([codex, "exec", "--skip-git-repo-check", "--json", "hi"], env=env, cwd=tmp,
                           timeout=120, stdin=subprocess.DEVNULL, capture_output=True, check=False)
        finally:
            assert fake.stdin is not None and fake.stdout is not None
            fake.stdin.close()  # the fixture serves until its stdin closes
            fake.wait(10)
            fake.stdout.close()
        body = json.loads(log.read_text().splitlines()[0])["body"]
    extra_tools = [item for item in body["input"] if item.get("type") == "additional_tools"]
    return {
        "tools": _strip(body.get("tools", [])),
        "additional_tools": [[t["name"], [(s.get("type"), s.get("name")) for s in t.get("tools", [])]]
                             for item in extra_tools for t in item.get("tools", [])],
        "additional_tools_specs": [_strip(item["tools"]) for item in extra_tools],
        "additional_tools_index": [i for i, item in enumerate(body["input"]) if item.get("type") == "additional_tools"],
        "exec_nested_tools": [re.findall(r"^### `([^`]+)`$", t.get("description", ""), re.M)
                              for item in extra_tools for ns in item.get("tools", [])
                              for t in ns.get("tools", []) if t.get("name") == "exec"],
        "request_keys": sorted(body),
        "parallel_tool_calls": body.get("parallel_tool_calls"),
    }


def main(codex: str) -> None:
    cases = [{"name": name, "model": slug, "config": extra, **_capture(codex, slug, extra)}
             for name, slug, extra in CASES]
    write_recording(OUT, {"codex": "0.169.0", "cases": cases})
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
