"""The `pycodex` command line: version, global -c, schema export, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

CLI = [sys.executable, "-m", "pycodex"]


def _run(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


def test_version_names_pycodex_and_the_compatible_codex_release() -> None:
    out = _run("--version")
    assert out.returncode == 0 and "pycodex" in out.stdout and "0.169.0" in out.stdout


def test_generate_json_schema_writes_valid_schemas_of_our_models(tmp_path: Path) -> None:
    out = _run("app-server", "generate-json-schema", "--out", str(tmp_path / "stable"))
    assert out.returncode == 0, out.stderr
    bundle = json.loads((tmp_path / "stable" / "codex_app_server_protocol.v2.schemas.json").read_text())
    jsonschema.Draft7Validator.check_schema(bundle)
    assert "ThreadStartParams" in bundle["definitions"]
    stable_start = bundle["definitions"]["ThreadStartParams"]["properties"]
    assert "selectedCapabilityRoots" not in stable_start  # experimental fields only with --experimental
    out = _run("app-server", "generate-json-schema", "--experimental", "--out", str(tmp_path / "exp"))
    assert out.returncode == 0, out.stderr
    exp = json.loads((tmp_path / "exp" / "codex_app_server_protocol.v2.schemas.json").read_text())
    assert "selectedCapabilityRoots" in exp["definitions"]["ThreadStartParams"]["properties"]


def test_a_bad_listen_url_is_a_clear_startup_error() -> None:
    # Codex 0.169.0 refuses it as a usage error: exit 2, "invalid value ... unsupported --listen URL".
    out = _run("app-server", "--listen", "tcp://nowhere")
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        "error: invalid value 'tcp://nowhere' for '--listen <URL>': "
        "unsupported --listen URL `tcp://nowhere`; expected `stdio://`, `unix://`, `unix://PATH`, `ws://IP:PORT`, or `off`"
    ]


def test_a_bad_config_override_names_the_problem(tmp_path: Path) -> None:
    proc = subprocess.run([*CLI, "-c", "novalue", "app-server"], capture_output=True, text=True, timeout=30,
                          input="", env={"CODEX_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1 and "novalue" in proc.stderr
