"""config/*, model/list, modelProvider/* and fuzzyFileSearch through the app-server, equal to Codex 0.169's
recorded answers (tests/data/frontends); the client validates every message against Codex's schema."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support.errors import as_codex
from tests.support.recorded import load, normalise, write_tree

CONFIG_READ = load("config_read")
MODEL_LIST = load("model_list")
CONFIG_WRITE = load("config_write")
FUZZY = load("fuzzy_search")


def _case(recording: Any, name: str) -> Any:
    return next(case for case in recording["cases"] if case["name"] == name)


def _answer(response: dict[str, Any]) -> dict[str, Any]:
    """The answer as the recordings of Codex hold it (pycodex's own error codes left out)."""
    return {"error": as_codex(response["error"])} if "error" in response else {"result": response["result"]}


async def test_config_read_and_models_equal_codex(app_server: Any, tmp_path: Path) -> None:
    read_case, models_case = _case(CONFIG_READ, "custom"), _case(MODEL_LIST, "custom")
    assert read_case["config_toml"] == models_case["config_toml"]
    home = tmp_path / "custom-home"
    home.mkdir()
    (home / "config.toml").write_text(read_case["config_toml"])
    client = await app_server(codex_home=home, env={"MOCK_KEY": "k"})
    for exchange in read_case["exchanges"]:
        response = await client.request("config/read", exchange["params"])
        assert normalise(_answer(response), {"$CODEX_HOME": home}) == exchange["answer"], exchange["params"]
    for exchange in models_case["exchanges"]:
        response = await client.request(exchange["method"], exchange["params"])
        assert _answer(response) == exchange["answer"], (exchange["method"], exchange["params"])
    requirements = await client.call("configRequirements/read")
    assert requirements == {"supportsIndependentSpeedModes": True, "requirements": None}


async def test_config_writes_answer_like_codex_and_restart_keeps_them(app_server: Any, tmp_path: Path) -> None:
    home = tmp_path / "write-home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG_WRITE["start"])
    client = await app_server(codex_home=home)
    for step in CONFIG_WRITE["steps"]:
        response = await client.request(step["method"], step["params"])
        assert normalise(_answer(response), {"$CODEX_HOME": home}) == step["answer"], step["params"]
        assert tomllib.loads((home / "config.toml").read_text()) == tomllib.loads(step["file_after"])
    warning = await client.wait_notification("configWarning", lambda p: "bogus_thing" in p["summary"])
    assert "`bogus_thing` is ignored" in warning["params"]["summary"]
    final = await client.call("config/read", {})
    assert normalise(final, {"$CODEX_HOME": home}) == CONFIG_WRITE["final_read"]["result"]


async def test_batch_write_round_trip_keeps_comments(app_server: Any, tmp_path: Path) -> None:
    home = tmp_path / "round-trip"
    home.mkdir()
    path = home / "config.toml"
    path.write_text(CONFIG_WRITE["start"])
    client = await app_server(codex_home=home)
    edits = [{"keyPath": "model", "value": "round-trip-model", "mergeStrategy": "replace"},
             {"keyPath": "model_reasoning_effort", "value": "low", "mergeStrategy": "replace"},
             {"keyPath": "model_providers.mock.stream_max_retries", "value": 2, "mergeStrategy": "upsert"}]
    result = await client.call("config/batchWrite", {"edits": edits, "reloadUserConfig": True})
    assert result["status"] == "ok"
    text = path.read_text()
    assert text.startswith("# my settings\n") and "# inline comment" in text
    config = (await client.call("config/read", {}))["config"]
    assert config["model"] == "round-trip-model" and config["model_reasoning_effort"] == "low"
    await client.close()
    restarted = await app_server(codex_home=home)
    config = (await restarted.call("config/read", {}))["config"]
    assert config["model_providers"]["mock"]["stream_max_retries"] == 2
    thread = await restarted.call("thread/start", {})
    assert thread["model"] == "round-trip-model" and thread["reasoningEffort"] == "low"


async def test_flagged_writes_report_the_override(app_server: Any, tmp_path: Path) -> None:
    home = tmp_path / "flags-home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG_WRITE["start"])
    flags = [arg for flag in CONFIG_WRITE["session_flags"] for arg in ("-c", flag)]
    client = await app_server(*flags, codex_home=home)
    for step in CONFIG_WRITE["flagged_steps"]:
        response = await client.request(step["method"], step["params"])
        assert normalise(_answer(response), {"$FLAGS_HOME": home}) == step["answer"], step["params"]


async def test_fuzzy_search_and_sessions_equal_codex(app_server: Any, tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write_tree(root, FUZZY["tree"])
    places: dict[str, Path | str] = {"$ROOT": root, "$MISSING": tmp_path / "missing"}

    def real(params: dict[str, Any]) -> dict[str, Any]:
        roots = [str(places[r]) if r in places else r for r in params.get("roots", [])]
        return {**params, "roots": roots} if "roots" in params else params

    client = await app_server(experimental=True)
    for exchange in FUZZY["searches"]:
        response = await client.request("fuzzyFileSearch", real(exchange["params"]))
        assert normalise(_answer(response), places) == exchange["answer"], exchange["params"]
    for step in FUZZY["session"]:
        if "notifications" in step:
            for expected in step["notifications"]:
                got = await client.wait_notification(expected["method"])
                assert normalise(got["params"], places) == expected["params"]
            continue
        response = await client.request(step["method"], real(step["params"]))
        assert normalise(_answer(response), places) == step["answer"], step["params"]


PROVIDER_WRITE = load("model_provider_write")


async def _replay(client: Any, home: Path, recording: dict[str, Any]) -> None:
    for step in recording["steps"]:
        response = await client.request(step["method"], step["params"])
        assert normalise(_answer(response), {"$CODEX_HOME": home}) == step["answer"], step["params"]
    written = tomllib.loads((home / "config.toml").read_text())
    assert written == tomllib.loads(recording["file_after"])


async def test_model_provider_config_write_equals_codex(app_server: Any, tmp_path: Path) -> None:
    recording = PROVIDER_WRITE["config_write"]
    home = tmp_path / "providers"
    home.mkdir()
    (home / "config.toml").write_text(recording["start"])
    client = await app_server(codex_home=home, experimental=True)
    await _replay(client, home, recording)
    assert (home / "config.toml").read_text().startswith("# my providers\n")
    refused = await client.request("modelProvider/config/write",
                                   {"settings": {"type": "bedrock", "providerId": "amazon-bedrock"}})
    assert refused["error"]["data"] == {"config_write_error_code": "configValidationError"}


async def test_model_provider_default_set_equals_codex_0_171(tmp_path: Path) -> None:
    """0.171's method is not in the 0.169 schema the process tests validate against: drive it in-process."""
    import asyncio

    from app_server.app import AppServer
    from pycodex.jsonrpc import RpcError
    from pycodex.transport import Endpoint, memory_pair, serve_transport

    recording = PROVIDER_WRITE["default_set"]
    home = tmp_path / "default"
    home.mkdir()
    (home / "config.toml").write_text(recording["start"])
    app = AppServer(codex_home=home)
    client_end, server_end = memory_pair()
    endpoint = Endpoint(client_end.send, remote_error=lambda e: RpcError(e["message"], code=e["code"],
                                                                         data=e.get("data")))

    async def read() -> None:
        while (raw := await client_end.recv()) is not None:
            endpoint.receive(raw)

    tasks = [asyncio.ensure_future(serve_transport(app.connection, server_end)), asyncio.ensure_future(read())]
    try:
        await endpoint.request("initialize", {"clientInfo": {"name": "t", "version": "1"},
                                              "capabilities": {"experimentalApi": True}}, timeout=10)
        for step in recording["steps"]:
            try:
                result = await endpoint.request(step["method"], step["params"], timeout=10)
                answer: dict[str, Any] = {"result": result}
            except RpcError as exc:
                answer = {"error": exc.to_wire()}
            assert normalise(answer, {"$CODEX_HOME": home}) == step["answer"], step["params"]
        assert tomllib.loads((home / "config.toml").read_text()) == tomllib.loads(recording["file_after"])
    finally:
        await client_end.close()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10)
        await app.shutdown()


@pytest.mark.codex
def test_recorded_provider_writes_match_the_live_binary(codex_bin: Path, tmp_path: Path) -> None:
    from scripts.record_model_provider_write import WRITE_REQUESTS, record

    recorded = PROVIDER_WRITE["config_write"]
    live = record(str(codex_bin), recorded["start"], WRITE_REQUESTS, home=tmp_path / "home")
    assert [s["answer"] for s in live["steps"]] == [s["answer"] for s in recorded["steps"]]
