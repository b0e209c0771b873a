"""The storage recordings (tests/data/storage/, by scripts/capture_codex_storage.py) hold together.

They are the facts docs/storage_format.md stands on: what Codex 0.169 and pycodex write under CODEX_HOME for
each scenario. The offline checks read the files only; the codex-marked one re-runs the plain-turn scenario
against the binary and compares it with the recording, so a drifted recording (or normalizer) shows up.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from scripts.capture_codex_storage import OUT_DIRS, SCENARIOS, run_scenario, server_argv

CODEX_DIR = OUT_DIRS["codex"]
PYCODEX_DIR = OUT_DIRS["pycodex"]
NAMES = [scenario.name for scenario in SCENARIOS]
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
# session_meta keys every reader needs, as Codex spells them (a subset of what the recordings hold).
CORE_META_KEYS = {"id", "session_id", "timestamp", "cwd", "originator", "cli_version", "source", "model_provider"}
LIVE_PATH = re.compile(r"^sessions/YYYY/MM/DD/rollout-<TS>-<ID\d+>\.jsonl$")
ARCHIVED_PATH = re.compile(r"^archived_sessions/rollout-<TS>-<ID\d+>\.jsonl$")


def load(folder: Path, name: str) -> dict[str, Any]:
    recording: dict[str, Any] = json.loads((folder / f"{name}.json").read_text())
    return recording


def record_types(recording: dict[str, Any]) -> list[str]:
    """Every rollout line's type, event and response items as `event_msg:<subtype>` / `response_item:<type>`."""
    out = []
    for rollout in recording["rollouts"]:
        for line in rollout["lines"]:
            kind = line["type"]
            out.append(f"{kind}:{line['payload'].get('type')}" if kind in ("event_msg", "response_item") else kind)
    return out


@pytest.mark.parametrize("folder", [CODEX_DIR, PYCODEX_DIR], ids=["codex", "pycodex"])
@pytest.mark.parametrize("name", NAMES)
def test_every_scenario_has_its_rollouts(folder: Path, name: str) -> None:
    recording = load(folder, name)
    assert recording["rollouts"], "no rollout written"
    for rollout in recording["rollouts"]:
        archived = name == "g_archive"
        assert (ARCHIVED_PATH if archived else LIVE_PATH).match(rollout["path"]), rollout["path"]
        assert rollout["path"] in recording["files"]
        assert rollout["lines"][0]["type"] == "session_meta"
        assert {"timestamp", "type", "payload"} <= set(rollout["lines"][0])


@pytest.mark.parametrize("folder", [CODEX_DIR, PYCODEX_DIR], ids=["codex", "pycodex"])
@pytest.mark.parametrize("name", NAMES)
def test_session_meta_is_codexs_snake_case(folder: Path, name: str) -> None:
    """Both write Codex's session_meta (pycodex's own keys sit under one snake_case key, ``pycodex``)."""
    for rollout in load(folder, name)["rollouts"]:
        payload = rollout["lines"][0]["payload"]
        assert CORE_META_KEYS <= set(payload), sorted(CORE_META_KEYS - set(payload))
        assert [key for key in payload if not SNAKE.match(key)] == []
        assert payload["cli_version"] == "0.169.0"


@pytest.mark.parametrize("folder", [CODEX_DIR, PYCODEX_DIR], ids=["codex", "pycodex"])
def test_each_scenario_recorded_what_it_did(folder: Path) -> None:
    types = {name: record_types(load(folder, name)) for name in NAMES}
    assert "response_item:function_call" in types["b_exec"]
    assert "response_item:custom_tool_call" in types["d_apply_patch"]
    assert "compacted" in types["e_compact"]
    assert len(load(folder, "f_fork")["rollouts"]) == 2
    approval = load(folder, "c_approval")["rpc"]
    assert [k["server_request"] for k in approval if "server_request" in k] == [
        "item/commandExecution/requestApproval"
    ]
    for name in NAMES:
        assert "compacted" not in types[name] or name == "e_compact"


def test_codex_keeps_names_in_the_session_index_and_the_state_db() -> None:
    recording = load(CODEX_DIR, "h_name")
    assert [entry["thread_name"] for entry in recording["journals"]["session_index.jsonl"]] == ["my thread"]
    assert [row["name"] for row in recording["sqlite"]["state_5.sqlite"]["threads"]["rows"]] == ["my thread"]
    archived = load(CODEX_DIR, "g_archive")["sqlite"]["state_5.sqlite"]["threads"]["rows"]
    assert [row["archived"] for row in archived] == [1]
    assert archived[0]["rollout_path"].startswith("<HOME>/archived_sessions/")


@pytest.mark.parametrize("folder", [CODEX_DIR, PYCODEX_DIR], ids=["codex", "pycodex"])
def test_schema_lists_every_recorded_table_and_column(folder: Path) -> None:
    schema = json.loads((folder / "sqlite_schema.json").read_text())
    for name in NAMES:
        for db, tables in load(folder, name)["sqlite"].items():
            assert db in schema, db
            for table, content in tables.items():
                columns = {column["name"] for column in schema[db]["tables"][table]}
                for row in content["rows"]:
                    assert set(row) == columns, (db, table)
                assert content["count"] >= len(content["rows"]) > 0


def test_codex_schema_has_the_thread_tables_and_its_migrations() -> None:
    schema = json.loads((CODEX_DIR / "sqlite_schema.json").read_text())
    state = schema["state_5.sqlite"]
    assert {"threads", "thread_read_receipts", "thread_sections", "_sqlx_migrations"} <= set(state["tables"])
    assert state["migrations"] and all(m["success"] for m in state["migrations"])
    versions = [m["version"] for m in state["migrations"]]
    assert versions == sorted(versions)
    assert {"thread_items", "thread_turns"} <= set(schema["thread_history_1.sqlite"]["tables"])


@pytest.mark.codex
def test_plain_turn_matches_the_recording(codex_bin: Path) -> None:
    fresh = asyncio.run(run_scenario(SCENARIOS[0], server_argv("codex", str(codex_bin))))
    schemas = fresh.pop("_schemas")
    recorded = load(CODEX_DIR, SCENARIOS[0].name)
    assert json.loads(json.dumps(fresh)) == recorded
    recorded_schema = json.loads((CODEX_DIR / "sqlite_schema.json").read_text())
    assert {db: s["tables"] for db, s in schemas.items()} == {db: recorded_schema[db]["tables"] for db in schemas}
