"""Config keys Codex documents that pycodex once accepted and ignored: each is now honoured or refused.

Behaviour checked against Codex 0.169.0 with a fake model server: `env_key` wins over
`experimental_bearer_token`; `env_http_headers` are sent only when their variable is set; the built-in
OpenAI provider takes `openai_base_url` and sends OpenAI-Organization / OpenAI-Project from the
environment; `--profile NAME` layers NAME.config.toml; the legacy `profile` selector is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app_server.config import ConfigError, load_config
from app_server.config.effective import effective_config
from tests.support.fake_model import message, run_turn

PROVIDER = """model = "base-model"
model_provider = "gw"
model_reasoning_effort = "high"

[model_providers.gw]
name = "Gateway"
base_url = "{url}"
experimental_bearer_token = "tok-literal"
env_http_headers = {{ "X-Team" = "TEAM_VAR", "X-Blank" = "BLANK_VAR", "X-Unset" = "UNSET_VAR" }}
http_headers = {{ "X-Static" = "s" }}
request_max_retries = 0
stream_max_retries = 0
"""


def _home(tmp_path: Path, text: str) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
    return home


def _summaries(config: Any) -> str:
    return "\n".join(w.summary + (w.details or "") for w in config.warnings)


async def test_headers_and_base_url_reach_the_model(
    app_server: Any, fake_model: Any, tmp_path: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("one")]}, {"output": [message("two")]}])
    home = _home(tmp_path, f'openai_base_url = "{model.url}"\n' + PROVIDER.format(url=model.url))
    client = await app_server(codex_home=home, env={
        "TEAM_VAR": "blue", "BLANK_VAR": " ", "OPENAI_API_KEY": "sk-test", "OPENAI_ORGANIZATION": "org-1",
        "OPENAI_PROJECT": "proj-1", "OPENAI_BASE_URL": None})
    gateway = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert (await run_turn(client, gateway, "hi"))["status"] == "completed"
    openai = (await client.call("thread/start", {"cwd": str(workspace), "modelProvider": "openai"}))["thread"]["id"]
    assert (await run_turn(client, openai, "hi"))["status"] == "completed"
    first, second = ({k.lower(): v for k, v in r["headers"].items()} for r in model.requests())
    assert first["authorization"] == "Bearer tok-literal"
    assert first["x-team"] == "blue" and first["x-static"] == "s"
    assert "x-blank" not in first and "x-unset" not in first and "openai-organization" not in first
    assert second["authorization"] == "Bearer sk-test"
    assert second["openai-organization"] == "org-1" and second["openai-project"] == "proj-1"


def test_env_key_wins_over_the_bearer_token(tmp_path: Path) -> None:
    from app_server.model.client import ModelClient
    from app_server.model.provider import RequestContext

    text = PROVIDER.format(url="http://127.0.0.1:9/v1").replace('name = "Gateway"', 'name = "G"\nenv_key = "GW_KEY"')
    provider = load_config(_home(tmp_path, text), env={}).provider
    ctx = RequestContext(thread_id="t", turn_id="u", originator="o", user_agent="a")
    request = ModelClient(provider, env={"GW_KEY": "from-env"}).build_request({}, ctx)
    assert request.headers["authorization"] == "Bearer from-env"


def test_openai_base_url_beats_the_environment(tmp_path: Path) -> None:
    config = load_config(_home(tmp_path, 'openai_base_url = "http://127.0.0.1:1/v9"\n'),
                         env={"OPENAI_BASE_URL": "http://127.0.0.1:2/v1", "OPENAI_API_KEY": "k"})
    assert config.provider.id == "openai" and config.provider.base_url == "http://127.0.0.1:1/v9"


def test_profile_file_layers_over_config_toml_and_under_flags(tmp_path: Path) -> None:
    home = _home(tmp_path, PROVIDER.format(url="http://127.0.0.1:9/v1"))
    (home / "fast.config.toml").write_text('model = "fast-model"\nmodel_reasoning_effort = "low"\nbogus_p = 1\n')
    config = load_config(home, ['model_reasoning_effort="medium"'], env={}, profile="fast")
    assert config.model == "fast-model" and config.model_reasoning_effort == "medium"
    assert f"profile ({home / 'fast.config.toml'}): `bogus_p` is ignored." in _summaries(config)
    read = effective_config(config, None, True, system_config=tmp_path / "none.toml")
    assert read["origins"]["model"]["name"] == {"type": "user", "file": str(home / "fast.config.toml"),
                                                "profile": "fast"}
    assert [layer["name"]["type"] for layer in read["layers"]] == ["sessionFlags", "user", "user", "system"]


def test_a_missing_profile_file_is_named_in_a_warning(tmp_path: Path) -> None:
    config = load_config(_home(tmp_path, 'model = "m"\n'), env={}, profile="nope")
    assert config.model == "m" and "nope.config.toml" in _summaries(config)


def test_legacy_profile_selector_is_refused_as_codex_refuses_it(tmp_path: Path) -> None:
    config = load_config(_home(tmp_path, 'profile = "fast"\n[profiles.fast]\nmodel = "x"\n'), env={})
    assert config.load_error is not None
    assert config.load_error.message == (
        'legacy `profile = "fast"` config is no longer supported; use `--profile fast` with '
        "`fast.config.toml` instead")
    with pytest.raises(ConfigError, match="legacy `profile"):
        load_config(tmp_path / "other", ['profile="fast"'], env={})


def test_profile_flag_with_a_legacy_table_is_fatal(tmp_path: Path) -> None:
    home = _home(tmp_path, '[profiles.fast]\nmodel = "x"\n')
    with pytest.raises(ConfigError, match=r"--profile `fast` cannot be used while .*\[profiles\.fast\]"):
        load_config(home, env={}, profile="fast")
    with pytest.raises(ConfigError, match="invalid profile name"):
        load_config(home, env={}, profile="../etc")


def test_legacy_profile_tables_and_unknown_keys_are_named(tmp_path: Path) -> None:
    config = load_config(_home(tmp_path, 'colour = "red"\n[profiles.slow]\nmodel = "x"\n'), env={})
    assert config.model != "x" and config.load_error is None
    text = _summaries(config)
    assert "`profiles.slow`" in text and "`colour` is ignored." in text


def test_exec_accepts_profile_after_resume_too() -> None:
    from pycodex.exec_cli.args import parse_exec_args

    assert parse_exec_args(["-p", "fast", "hi"]).profile == "fast"
    assert parse_exec_args(["resume", "--last", "--profile", "slow"]).profile == "slow"


def test_the_server_reads_its_profile_again_on_reload(tmp_path: Path) -> None:
    from app_server.app import AppServer

    home = _home(tmp_path, 'model = "base"\n')
    (home / "fast.config.toml").write_text('model = "fast-model"\n')
    app = AppServer(codex_home=home, profile="fast")
    (home / "fast.config.toml").write_text('model = "faster-model"\n')
    assert app.config.model == "fast-model" and app.reload_config().model == "faster-model"


def test_keys_codex_knows_but_pycodex_does_not_implement_are_named(tmp_path: Path) -> None:
    text = 'model_verbosity = "low"\n[tui]\ntheme = "dark"\n[model_providers.g]\nname = "G"\nbase_url = "http://h/v1"\n' \
        'supports_websockets = true\n'
    config = load_config(_home(tmp_path, text), ['review_model="r"'], env={})
    [warning] = [w for w in config.warnings if "does not implement" in w.summary]
    home = tmp_path / "home"
    assert warning.summary == (
        "pycodex does not implement 3 configuration settings that Codex knows.\n"
        f"  user ({home / 'config.toml'}): `model_providers.g.supports_websockets` has no effect in pycodex.\n"
        f"  user ({home / 'config.toml'}): `model_verbosity` has no effect in pycodex.\n"
        "  session-flags: `review_model` has no effect in pycodex.")
