"""Record Codex's answers to modelProvider/config/write (0.169) and modelProvider/default/set (0.171).

    python scripts/record_model_provider_write.py CODEX_0169 CODEX_0171 tests/data/frontends/model_provider_write.json

Each binary runs `app-server` in a throwaway CODEX_HOME; paths in the answers become `$CODEX_HOME`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pycodex.json_types import JsonObj

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.manifest import record_in_manifest

URL = "http://127.0.0.1:9/v1"
WRITE = "modelProvider/config/write"
DEFAULT = "modelProvider/default/set"


def _gw(**fields: Any) -> JsonObj:
    return {"settings": {"type": "customGateway", **fields}}


WRITE_REQUESTS: list[tuple[str, JsonObj]] = [
    (WRITE, _gw(name="My GW", baseUrl=URL, envKey="GW_KEY")), (WRITE, _gw(name="My GW", baseUrl=URL)),
    (WRITE, _gw(name="  Ünïcode  Name!! 2 ", baseUrl=URL)), (WRITE, _gw(name="!!!", baseUrl=URL)),
    (WRITE, _gw(providerId="my-gw", name="Renamed", envKey="K2")), (WRITE, _gw(providerId="my-gw", envKey=None)),
    (WRITE, _gw(providerId="my-gw", baseUrl=None)), (WRITE, _gw(name="z", baseUrl=" https://h/v1 ", envKey=" E ")),
    (WRITE, _gw(name="   ", baseUrl=URL)), (WRITE, _gw(name="My GW")), (WRITE, _gw(name="OpenAI", baseUrl=URL)),
    (WRITE, _gw(providerId="nope", name="x")), (WRITE, _gw(providerId="openai", name="x")),
    (WRITE, _gw(name="x", baseUrl="https://u:p@h/v1")), (WRITE, _gw(name="x", baseUrl="ftp://h/v1")),
    (WRITE, _gw(name="x", baseUrl="https://h/v1?q=1")), (WRITE, _gw(name="x", baseUrl="https://h/v1#f")),
    (WRITE, _gw(name="y", baseUrl="https://h/v1", envKey="")),
    (WRITE, _gw(name="y", baseUrl="https://h/v1", envKey="A-B")),
    ("modelProvider/list", {}),
]
DEFAULT_REQUESTS: list[tuple[str, JsonObj]] = [
    (DEFAULT, {"providerId": "gw"}), ("modelProvider/list", {}), (DEFAULT, {"providerId": "nope"}),
    (DEFAULT, {"providerId": ""}), (DEFAULT, {"providerId": "openai"}),
]
DEFAULT_START = '# c\nmodel = "m"\n\n[model_providers.gw]\nname = "GW"\nbase_url = "http://127.0.0.1:9/v1"\n'


def record(binary: str, start: str, requests: list[tuple[str, JsonObj]], home: Path | None = None) -> JsonObj:
    home = home or Path(tempfile.mkdtemp())
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(start)
    init = {"clientInfo": {"name": "t", "version": "1"}, "capabilities": {"experimentalApi": True}}
    lines: list[JsonObj] = [{"id": 1, "method": "initialize", "params": init}, {"method": "initialized"}]
    lines += [{"id": i + 2, "method": method, "params": params} for i, (method, params) in enumerate(requests)]
    answers: dict[int, JsonObj] = {}
    with subprocess.Popen(
        [binary, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={"CODEX_HOME": str(home), "PATH": "/usr/bin:/bin"}, text=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        proc.stdin.flush()
        for raw in proc.stdout:
            msg = json.loads(raw)
            if isinstance(msg.get("id"), int) and msg["id"] >= 2:
                answers[msg["id"]] = {k: msg[k] for k in ("result", "error") if k in msg}
                if len(answers) == len(requests):
                    break
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    steps = [
        {"method": method, "params": params,
         "answer": json.loads(json.dumps(answers[i + 2]).replace(str(home), "$CODEX_HOME"))}
        for i, (method, params) in enumerate(requests)
    ]
    return {"start": start, "steps": steps, "file_after": (home / "config.toml").read_text()}


def main(argv: list[str]) -> None:
    codex_0169, codex_0171, out = argv
    data = {
        "codex_version": {"config_write": "codex-cli 0.169.0", "default_set": "codex-cli 0.171.0"},
        "config_write": record(codex_0169, '# my providers\nmodel = "m"\n', WRITE_REQUESTS),
        "default_set": record(codex_0171, DEFAULT_START, DEFAULT_REQUESTS),
    }
    Path(out).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    record_in_manifest(Path(out))


if __name__ == "__main__":
    main(sys.argv[1:])
