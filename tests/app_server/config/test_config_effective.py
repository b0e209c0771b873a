"""config/read's effective config, compared with Codex 0.169's recorded answers (tests/data/frontends)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app_server.config import load_config
from app_server.config.effective import effective_config, layer_version, unknown_dotted_keys
from tests.support.recorded import load, normalise, write_tree

RECORDED = load("config_read")
SYSTEM_FILE = "/etc/codex/config.toml"
CASES = [(case["name"], i) for case in RECORDED["cases"] for i in range(len(case["exchanges"]))]


def _case(name: str) -> dict[str, Any]:
    return next(case for case in RECORDED["cases"] if case["name"] == name)


def _setup(tmp_path: Path, case: dict[str, Any]) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    if case["project"]:
        write_tree(project, case["project"])
    if case["config_toml"] is not None:
        (home / "config.toml").write_text(case["config_toml"].replace("$PROJECT", str(project)))
    return home, project


def _ours(tmp_path: Path, name: str, params: dict[str, Any]) -> Any:
    case = _case(name)
    home, project = _setup(tmp_path, case)
    loaded = load_config(home, env={})
    cwd = Path(params["cwd"].replace("$PROJECT", str(project))) if params.get("cwd") else None
    system = tmp_path / "no-system.toml"
    result = effective_config(loaded, cwd, bool(params.get("includeLayers")), system_config=system)
    places: dict[str, Path | str] = {"$CODEX_HOME": home, "$PROJECT": project, SYSTEM_FILE: system}
    if case["project"]:
        # The user layer names the project's real path, so its version differs per machine: check ours
        # against the recorded table at this path, then compare the rest under Codex's recorded version.
        recorded = case["exchanges"][0]["answer"]["result"]["layers"]
        user = next(layer for layer in recorded if layer["name"]["type"] == "user")
        here = {"$PROJECT": project, "$CODEX_HOME": home}
        places[user["version"]] = layer_version(normalise(user["config"], {str(p): n for n, p in here.items()}))
    return normalise(result, places)


@pytest.mark.parametrize(("name", "index"), CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_config_read_equals_codex(tmp_path: Path, name: str, index: int) -> None:
    exchange = _case(name)["exchanges"][index]
    assert _ours(tmp_path, name, exchange["params"]) == exchange["answer"]["result"]


def test_layers_key_is_omitted_unless_requested(tmp_path: Path) -> None:
    assert "layers" not in _ours(tmp_path, "custom", {})


def test_the_effective_config_has_codex_s_keys_and_provider_shape(tmp_path: Path) -> None:
    config = _ours(tmp_path, "custom", {})["config"]
    assert len(config) >= 100 and "bogus_key" not in config
    provider = config["model_providers"]["mock"]
    assert provider["wire_api"] == "responses" and provider["env_key"] == "MOCK_KEY" and len(provider) >= 19
    assert "nested" not in config["tui"]


def test_layer_version_is_sha256_of_sorted_compact_json() -> None:
    assert layer_version({}) == "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    assert layer_version({"b": 1, "a": {"y": 2, "x": "é"}}) == layer_version({"a": {"x": "é", "y": 2}, "b": 1})


def test_unknown_keys_are_named_with_their_dotted_path() -> None:
    table = {"bogus_key": 1, "model": "m", "tui": {"nested": {"x": 1}, "theme": "dark"},
             "model_providers": {"p": {"name": "P", "nope": True}}}
    assert unknown_dotted_keys(table) == ["bogus_key", "model_providers.p.nope", "tui.nested"]


def test_session_flags_are_the_top_layer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    loaded = load_config(home, ["model=from-flag"], env={})
    result = effective_config(loaded, None, True, system_config=tmp_path / "none.toml")
    assert result["config"]["model"] == "from-flag"
    assert result["origins"]["model"]["name"] == {"type": "sessionFlags"}
    assert result["layers"][0]["name"] == {"type": "sessionFlags"}


@pytest.mark.codex
def test_recorded_answers_match_the_live_binary(codex_bin: Path, tmp_path: Path) -> None:
    from scripts.record_config_read import record_config_read

    live = record_config_read(codex_bin, tmp_path.resolve())
    # Layers naming the project's path hash it into their version, so those versions differ per run.
    assert _without_versions(live["cases"]) == _without_versions(RECORDED["cases"])
    assert live["cases"][:2] == RECORDED["cases"][:2]


def _without_versions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_versions(v) for k, v in value.items() if k != "version"}
    if isinstance(value, list):
        return [_without_versions(v) for v in value]
    return value


def test_the_defaults_table_is_derived_from_the_recording() -> None:
    """app_server/config/effective_defaults.json is what scripts/record_config_read.py derives."""
    from importlib import resources

    from scripts.record_config_read import derive_defaults

    shipped = json.loads(resources.files("app_server.config").joinpath("effective_defaults.json").read_text())
    assert shipped == derive_defaults(RECORDED)
