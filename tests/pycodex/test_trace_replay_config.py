"""How a replay configures the server under test from what the trace says (no processes)."""

from __future__ import annotations

from pathlib import Path

from pycodex.trace.replay_config import recorded_provider, replay_setup

URL = "http://127.0.0.1:9/v1"
SHELL = {"OPENAI_API_KEY": "sk-shell", "CODEX_API_KEY": "sk-shell", "PYCODEX_SCRIPT": "/elsewhere.json", "HOME": "/h"}


def thread_answer(provider: str) -> dict[str, object]:
    return {"dir": "out", "channel": "client", "msg": {"id": 2, "result": {"modelProvider": provider}}}


def test_the_recorded_provider_is_the_noted_one_else_the_threads_else_the_configs() -> None:
    assert recorded_provider({"model_provider": "scripted"}, [thread_answer("openai")]) == "scripted"
    assert recorded_provider({"config": {"model_provider": "p"}}, [thread_answer("openai")]) == "openai"
    assert recorded_provider({"config": {"model_provider": "p"}}, []) == "p"
    assert recorded_provider({"config": None}, []) is None


def test_an_old_scripted_fallback_trace_replays_with_the_provider_named_and_on_the_noted_script(
    tmp_path: Path,
) -> None:
    """Recorded when no provider meant the scripted model (it now means `openai`): the replay names it."""
    script = {"responses": [[{"type": "message", "text": "hi"}]]}
    setup = replay_setup({"config": None, "model_script": script}, "scripted", URL, SHELL, tmp_path)
    assert setup.config == {"model_provider": "scripted"} and setup.overrides == []
    assert setup.env["HOME"] == "/h"
    assert Path(setup.env["PYCODEX_SCRIPT"]).read_text() == '{"responses": [[{"type": "message", "text": "hi"}]]}'
    demo = replay_setup({"config": None, "model_script": None}, "scripted", URL, SHELL, tmp_path)
    assert "PYCODEX_SCRIPT" not in demo.env  # the built-in demo script, as recorded


def test_a_scripted_provider_the_config_names_keeps_the_keys_and_its_script_moves(tmp_path: Path) -> None:
    config = {"model_provider": "scripted", "model_providers": {"scripted": {"script": "/gone.json"}}}
    setup = replay_setup({"config": config, "model_script": {"responses": []}}, "scripted", URL, SHELL, tmp_path)
    assert setup.env["OPENAI_API_KEY"] == "sk-shell"
    assert setup.config is not None
    assert setup.config["model_providers"]["scripted"]["script"] == setup.env["PYCODEX_SCRIPT"]


def test_the_builtin_openai_provider_is_pointed_at_the_playback_server_under_its_own_id(tmp_path: Path) -> None:
    setup = replay_setup({"config": None, "config_overrides": ["model=x"]}, "openai", URL, SHELL, tmp_path)
    assert setup.config == {"openai_base_url": URL}
    assert setup.overrides == ["model=x"]
    assert setup.env["OPENAI_API_KEY"] == "replay" and "CODEX_API_KEY" not in setup.env


def test_a_configured_provider_moves_to_the_playback_server(tmp_path: Path) -> None:
    config = {"model_provider": "p", "model_providers": {"p": {"name": "P", "base_url": "https://x", "env_key": "K"}}}
    setup = replay_setup({"config": config, "config_overrides": ["model_provider=q", "model=m"]}, "p", URL, {},
                         tmp_path)
    assert setup.config is not None
    assert setup.config["model_providers"]["p"] == {"name": "P", "base_url": URL, "env_key": "K",
                                                    "request_max_retries": 0, "stream_max_retries": 0}
    assert setup.overrides == ["model=m"] and setup.env == {"K": "replay"}
