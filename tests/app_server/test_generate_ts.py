"""`pycodex app-server generate-ts`: TypeScript derived from the JSON Schema bundle, in Codex's layout, and
the server notifications and server requests it describes carry Codex's names.

The `tsc --noEmit` check installs `typescript` with npm into a cache folder ($PYCODEX_TSC_CACHE, default
~/.cache/pycodex-tests/typescript) the first time; it is skipped with the reason when npm is absent.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app_server.protocol.schema_export import finished_bundle
from app_server.protocol.server_messages import ALL_SERVER_REQUESTS, SERVER_NOTIFICATIONS
from app_server.protocol.typescript_export import render_type, typescript_files
from tests.support.schema import snapshot_bundle
from tests.support.tools import require_tsc

_IMPORT = re.compile(r'^import type \{ (\w+) \} from "([^"]+)";$', re.MULTILINE)
_TSCONFIG = {
    "compilerOptions": {"strict": True, "noEmit": True, "target": "es2020", "module": "esnext",
                        "moduleResolution": "bundler", "noUnusedLocals": True},
    "include": ["**/*.ts"],
}


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "string"}, "string"),
    ({"type": ["integer", "null"]}, "number | null"),
    ({"enum": ["a", "b"], "type": "string"}, '"a" | "b"'),
    ({"const": "x"}, '"x"'),
    ({"type": "array", "items": {"$ref": "#/definitions/Turn"}}, "Array<Turn>"),
    ({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}, "[string, number]"),
    ({"anyOf": [{"$ref": "#/definitions/Thread"}, {"type": "null"}]}, "Thread | null"),
    ({"type": "object", "properties": {"a-b": {"type": "string"}, "c": {"type": "boolean"}}, "required": ["c"]},
     '{ "a-b"?: string, c: boolean, }'),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "{ [key in string]?: number }"),
    ({}, "JsonValue"),
])
def test_render_type(schema: dict[str, Any], expected: str) -> None:
    assert render_type(schema)[0] == expected


def test_render_type_names_what_it_references() -> None:
    _, refs = render_type({"anyOf": [{"$ref": "#/definitions/A"}, {"type": "array", "items": True}]})
    assert refs == {"A", "JsonValue"}


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return typescript_files(finished_bundle(experimental=True))


def test_layout_is_codexs_and_every_import_resolves(files: dict[str, str]) -> None:
    for top in ("ClientRequest.ts", "ServerNotification.ts", "ServerRequest.ts", "RequestId.ts", "index.ts",
                "v2/index.ts", "v2/ThreadStartedNotification.ts", "serde_json/JsonValue.ts"):
        assert top in files
    for path, text in files.items():
        folder = Path(path).parent
        for name, target in _IMPORT.findall(text):
            resolved = os.path.normpath(folder / f"{target}.ts")
            assert resolved in files, f"{path} imports {name} from {target}, which is not written"
            assert f"export type {name} =" in files[resolved]


def test_messages_carry_codexs_names() -> None:
    """Every notification and server request pycodex describes is Codex's, with Codex's params type name."""
    codex = snapshot_bundle("experimental")["definitions"]

    def members(union: str) -> dict[str, str]:
        return {v["properties"]["method"]["enum"][0]: v["properties"]["params"]["$ref"].rsplit("/", 1)[-1]
                for v in codex[union]["oneOf"]}

    notifications, requests = members("ServerNotification"), members("ServerRequest")
    ours_only = {"thread/search/partial"}  # Codex 0.171's, served only to 0.171 clients
    assert {m: model.__name__ for m, model in SERVER_NOTIFICATIONS.items() if m not in ours_only} == {
        m: notifications[m] for m in SERVER_NOTIFICATIONS if m not in ours_only}
    assert {m: params.__name__ for m, (params, _) in ALL_SERVER_REQUESTS.items()} == {
        m: requests[m] for m in ALL_SERVER_REQUESTS}


def _tsc() -> Path:
    return require_tsc()


@pytest.mark.parametrize("flags", [[], ["--experimental"]], ids=["stable", "experimental"])
def test_generate_ts_output_type_checks(tmp_path: Path, flags: list[str]) -> None:
    tsc = _tsc()
    out = tmp_path / "ts"
    subprocess.run([sys.executable, "-m", "pycodex", "app-server", "generate-ts", "--out", str(out), *flags],
                   check=True, timeout=120)
    assert (out / "v2" / "index.ts").is_file()
    (out / "tsconfig.json").write_text(json.dumps(_TSCONFIG), encoding="utf-8")
    checked = subprocess.run([str(tsc), "-p", str(out)], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-4000:]
