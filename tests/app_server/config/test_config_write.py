"""config/value/write and config/batchWrite against Codex 0.169's recorded steps (tests/data/frontends)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from app_server.config import load_config
from app_server.config.effective import effective_config, read_layers
from app_server.config.write import ConfigEdit, ConfigWriteError, edits_from_params, write_values
from tests.support.recorded import load, normalise

RECORDED = load("config_write")


def _step(home: Path, method: str, params: dict[str, Any]) -> dict[str, Any]:
    raw = params["edits"] if method == "config/batchWrite" else [params]
    try:
        outcome = write_values(home / "config.toml", edits_from_params(raw), codex_home=home,
                               expected_version=params.get("expectedVersion"), file_path=params.get("filePath"),
                               env={})
    except ConfigWriteError as exc:
        return {"error": exc.to_wire()}
    return {"result": normalise(outcome.response, {"$CODEX_HOME": home})}


def test_every_step_answers_and_writes_like_codex(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(RECORDED["start"])
    for step in RECORDED["steps"]:
        assert _step(home, step["method"], step["params"]) == step["answer"], step["params"]
        ours = tomllib.loads((home / "config.toml").read_text())
        assert ours == tomllib.loads(step["file_after"]), step["params"]
    final = effective_config(load_config(home, env={}), None, False, system_config=tmp_path / "none.toml")
    assert normalise(final, {"$CODEX_HOME": home}) == RECORDED["final_read"]["result"]


def test_writes_under_session_flags_report_the_override_like_codex(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(RECORDED["start"])
    loaded = load_config(home, RECORDED["session_flags"], env={})
    higher = [layer for layer in read_layers(loaded, None) if layer.name["type"] == "sessionFlags"]
    for step in RECORDED["flagged_steps"]:
        params = step["params"]
        raw = params["edits"] if step["method"] == "config/batchWrite" else [params]
        outcome = write_values(home / "config.toml", edits_from_params(raw), codex_home=home, env={},
                               higher_layers=higher)
        assert {"result": normalise(outcome.response, {"$FLAGS_HOME": home})} == step["answer"], params


def test_comments_and_formatting_survive(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(RECORDED["start"])
    write_values(path, [ConfigEdit("model_reasoning_effort", "high"),
                        ConfigEdit("model_providers.mock.env_key", "K", "upsert")], codex_home=tmp_path, env={})
    text = path.read_text()
    assert text.startswith("# my settings\nmodel = \"my-model\"   # inline comment\n")
    assert 'model_reasoning_effort = "high"' in text and 'env_key = "K"' in text


def test_a_failed_batch_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(RECORDED["start"])
    with pytest.raises(ConfigWriteError) as info:
        write_values(path, [ConfigEdit("model", "ok"), ConfigEdit("sandbox_mode", "nope")], codex_home=tmp_path,
                     env={})
    assert info.value.write_code == "configValidationError"
    assert path.read_text() == RECORDED["start"]


def test_unknown_keys_are_written_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    outcome = write_values(path, [ConfigEdit("bogus_thing", 1), ConfigEdit("tui.nested", {"x": 1})],
                           codex_home=tmp_path, env={})
    assert outcome.unknown_keys == ["bogus_thing", "tui.nested"]
    assert tomllib.loads(path.read_text())["bogus_thing"] == 1


def test_the_version_from_a_write_is_accepted_as_expected_version(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    first = write_values(path, [ConfigEdit("model", "a")], codex_home=tmp_path, env={})
    write_values(path, [ConfigEdit("model", "b")], codex_home=tmp_path, expected_version=first.response["version"],
                 env={})
    with pytest.raises(ConfigWriteError) as info:
        write_values(path, [ConfigEdit("model", "c")], codex_home=tmp_path,
                     expected_version=first.response["version"], env={})
    assert info.value.write_code == "configVersionConflict"


@pytest.mark.codex
def test_recorded_steps_match_the_live_binary(codex_bin: Path, tmp_path: Path) -> None:
    from scripts.record_config_read import record_config_write

    live = record_config_write(codex_bin, tmp_path.resolve())
    assert [s["answer"] for s in live["steps"]] == [s["answer"] for s in RECORDED["steps"]]
    assert live["flagged_steps"] == RECORDED["flagged_steps"]
