"""model/list, modelProvider/list and modelProvider/capabilities/read against Codex 0.169's recorded answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app_server.config import load_config
from app_server.model.catalog import catalog, model_list, model_provider_capabilities, model_provider_list
from pycodex.jsonrpc.errors import RpcError
from tests.support.recorded import load

RECORDED = load("model_list")
EXCHANGES = [(case["name"], i) for case in RECORDED["cases"] for i in range(len(case["exchanges"]))]


def _case(name: str) -> dict[str, Any]:
    return next(case for case in RECORDED["cases"] if case["name"] == name)


def _config_table(tmp_path: Path, text: str | None) -> dict[str, Any]:
    home = tmp_path / "home"
    home.mkdir()
    if text is not None:
        (home / "config.toml").write_text(text)
    return dict(load_config(home, env={}).raw)


def _answer(method: str, params: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    try:
        if method == "model/list":
            result = model_list(catalog(), config, include_hidden=params.get("includeHidden"),
                                cursor=params.get("cursor"), limit=params.get("limit"),
                                model_provider=params.get("modelProvider"))
        elif method == "modelProvider/list":
            result = model_provider_list(config)
        else:
            result = model_provider_capabilities(config)
    except RpcError as exc:
        return {"error": exc.to_wire()}
    return {"result": result}


@pytest.mark.parametrize(("name", "index"), EXCHANGES, ids=[f"{n}-{i}" for n, i in EXCHANGES])
def test_answers_equal_codex(tmp_path: Path, name: str, index: int) -> None:
    case = _case(name)
    exchange = case["exchanges"][index]
    config = _config_table(tmp_path, case["config_toml"])
    assert _answer(exchange["method"], exchange["params"], config) == exchange["answer"]


def test_the_catalog_has_nine_visible_models_and_one_default() -> None:
    visible = model_list(catalog(), {})["data"]
    assert len(visible) == 9 and all(not m["hidden"] for m in visible)
    assert [m["id"] for m in visible if m["isDefault"]] == ["gpt-6.1-sol"]
    every = model_list(catalog(), {}, include_hidden=True)["data"]
    assert len(every) == 12 and {m["id"] for m in every if m["hidden"]} >= {"codex-auto-review"}


def test_paging_walks_the_whole_list_without_repeats() -> None:
    seen: list[str] = []
    cursor = None
    while True:
        page = model_list(catalog(), {}, include_hidden=True, cursor=cursor, limit=5)
        seen += [m["id"] for m in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == [m["id"] for m in model_list(catalog(), {}, include_hidden=True)["data"]]


@pytest.mark.codex
def test_recorded_answers_match_the_live_binary(codex_bin: Path, tmp_path: Path) -> None:
    from scripts.record_config_read import record_model_list

    assert record_model_list(codex_bin, tmp_path.resolve())["cases"] == RECORDED["cases"]
