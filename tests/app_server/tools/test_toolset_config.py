"""The config switches reach the model request: config.toml's `[features]` and `web_search`, and thread/start's
`config` overrides on top of them (tools.toolset)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config


def _names(body: dict[str, Any]) -> list[str]:
    return [t.get("name", t["type"]) for t in body.get("tools", [])]


async def _first_request_tools(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, *,
                               extra: str = "", start_config: dict[str, Any] | None = None) -> list[str]:
    model = await fake_model([{"output": [message("ok")]}])
    model_config(codex_home, model.url, extra=extra)
    client = await app_server()
    params: dict[str, Any] = {"cwd": str(workspace)}
    if start_config is not None:
        params["config"] = start_config
    thread = (await client.call("thread/start", params))["thread"]["id"]
    await client.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "hi"}]})
    await client.wait_notification("turn/completed", timeout=20)
    return _names(model.requests()[0]["body"])


async def test_config_toml_switches_turn_tools_off(app_server: Any, fake_model: Any, codex_home: Path,
                                                   workspace: Path) -> None:
    names = await _first_request_tools(app_server, fake_model, codex_home, workspace,
                                       extra='web_search = "disabled"\n[features]\ngoals = false\nmulti_agent = false\n')
    assert names == ["exec_command", "write_stdin", "request_user_input", "view_image"]


async def test_thread_start_config_overrides_the_file(app_server: Any, fake_model: Any, codex_home: Path,
                                                      workspace: Path) -> None:
    names = await _first_request_tools(app_server, fake_model, codex_home, workspace, extra="[features]\ngoals = false\n",
                                       start_config={"features.goals": True, "features.view_image": False,
                                                     "web_search": "live"})
    assert "view_image" not in names and "get_goal" in names and names[-1] == "web_search"


async def test_a_thread_without_an_environment_gets_no_tools(app_server: Any, fake_model: Any, codex_home: Path,
                                                             workspace: Path) -> None:
    model = await fake_model([{"output": [message("ok")]}])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    thread = (await client.call("thread/start", {"cwd": str(workspace), "environments": []}))["thread"]["id"]
    await client.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "hi"}]})
    await client.wait_notification("turn/completed", timeout=20)
    assert _names(model.requests()[0]["body"]) == []
