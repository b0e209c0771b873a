"""Loading config.toml, -c overrides and thread overrides, with Codex's warnings and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app_server.config import (
    DEFAULT_MODEL,
    UNTRUSTED_MESSAGE,
    ConfigError,
    ConfigLayer,
    LoadedConfig,
    load_config,
    parse_cli_override,
    resolve_codex_home,
)

MOCK_CONFIG = """\
model = "mock-model"
approval_policy = "never"
sandbox_mode = "workspace-write"
model_provider = "mock_provider"

[model_providers.mock_provider]
name = "Mock provider"
base_url = "http://127.0.0.1:37121/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


def write(home: Path, text: str) -> Path:
    path = home / "config.toml"
    path.write_text(text)
    return path


def load(home: Path, overrides: list[str] | None = None, strict: bool = False, **env: str) -> LoadedConfig:
    return load_config(home, overrides or [], strict=strict, env=env)


def summaries(config: LoadedConfig) -> list[str]:
    return [w.summary for w in config.warnings]


def test_a_missing_file_without_an_api_key_selects_openai_as_codex_does_not_the_offline_model(tmp_path: Path) -> None:
    """No silent fake model: with no provider and no key the provider is still OpenAI (a turn then fails
    and says how to configure one); no warning is needed at load time."""
    config = load(tmp_path)
    assert config.model_provider_id == "openai"
    assert not config.provider.is_scripted
    assert config.model == DEFAULT_MODEL
    assert config.project_root_markers == (".git",)
    assert config.warnings == ()


def test_the_offline_model_runs_when_named_as_the_model_or_the_provider(tmp_path: Path) -> None:
    assert load(tmp_path, ['model="scripted"']).provider.is_scripted
    assert load(tmp_path, ['model_provider="scripted"']).provider.is_scripted
    # A configured provider keeps its model name, even `scripted`.
    write(tmp_path, MOCK_CONFIG)
    assert load(tmp_path, ['model="scripted"']).model_provider_id == "mock_provider"


def test_an_api_key_in_the_environment_selects_the_openai_provider_with_that_key(tmp_path: Path) -> None:
    config = load(tmp_path, OPENAI_API_KEY="sk-x")
    assert config.model_provider_id == "openai"
    assert config.provider.env_key == "OPENAI_API_KEY"
    assert config.provider.base_url == "https://api.openai.com/v1"
    assert config.warnings == ()


def test_a_codex_style_file_loads_into_typed_values(tmp_path: Path) -> None:
    write(
        tmp_path,
        MOCK_CONFIG
        + 'env_key = "CODEX_API_KEY"\nstream_idle_timeout_ms = 1500\nrequires_openai_auth = false\n'
        + 'http_headers = { "x-a" = "1" }\nquery_params = { api-version = "v2" }\n'
        + "\n[features]\nsome_feature = true\nnested = { anything = [1, 2] }\n",
    )
    config = load(tmp_path)
    assert config.warnings == ()
    assert (config.model, config.approval_policy, config.sandbox_mode) == (
        "mock-model",
        "never",
        "workspace-write",
    )
    provider = config.provider
    assert provider.id == "mock_provider" and provider.name == "Mock provider"
    assert provider.responses_url() == "http://127.0.0.1:37121/v1/responses"
    assert (provider.request_max_retries, provider.stream_max_retries) == (0, 0)
    assert provider.stream_idle_timeout_ms == 1500
    assert provider.env_key == "CODEX_API_KEY"
    assert dict(provider.http_headers) == {"x-a": "1"}
    assert dict(provider.query_params) == {"api-version": "v2"}
    assert config.features["some_feature"] is True


def test_provider_defaults_match_codex(tmp_path: Path) -> None:
    write(tmp_path, 'model_provider = "p"\n[model_providers.p]\nname = "P"\nbase_url = "http://x/v1"\n')
    provider = load(tmp_path).provider
    assert (provider.request_max_retries, provider.stream_max_retries) == (4, 5)
    assert provider.stream_idle_timeout_ms == 300_000
    assert provider.env_key is None and provider.wire_api == "responses"


def test_untrusted_in_the_file_is_fatal_with_codex_message(tmp_path: Path) -> None:
    write(tmp_path, 'approval_policy = "untrusted"\n')
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    assert str(info.value) == 'approval_policy = "untrusted" is no longer supported; remove this setting'
    assert str(info.value) == UNTRUSTED_MESSAGE


def test_untrusted_in_a_flag_or_thread_override_is_refused_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no longer supported"):
        load(tmp_path, ['approval_policy="untrusted"'])
    with pytest.raises(ConfigError, match="no longer supported"):
        load(tmp_path).with_overrides({"approval_policy": "untrusted"})
    assert load(tmp_path).with_overrides({"approval_policy": "on-request"}).approval_policy == "on-request"


def test_unknown_keys_give_one_sorted_warning_per_codex_wording(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bogus = 1\n" + MOCK_CONFIG + "\n[tui2]\nx = 1\n\n[features]\nanything_goes = true\n",
    )
    config = load(tmp_path, ["zz=1"])
    assert summaries(load(tmp_path)) == [
        "Codex is ignoring 2 unrecognized configuration settings. Check for typos or deprecated settings.\n"
        f"  user ({path}): `bogus` is ignored.\n"
        f"  user ({path}): `tui2` is ignored."
    ]
    assert summaries(config)[0].endswith("  session-flags: `zz` is ignored.")
    assert summaries(config)[0].startswith("Codex is ignoring 3 unrecognized configuration settings.")


def test_an_unknown_provider_field_is_reported_with_its_dotted_name(tmp_path: Path) -> None:
    write(tmp_path, MOCK_CONFIG + "bogus = 1\n")
    [warning] = load(tmp_path).warnings
    assert warning.summary.startswith("Codex is ignoring 1 unrecognized configuration setting. ")
    assert "`model_providers.mock_provider.bogus` is ignored." in warning.summary


def test_strict_mode_makes_an_unknown_key_an_error_naming_key_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'model = "m"\nfoo_bar = 1\n')
    with pytest.raises(ConfigError) as info:
        load(tmp_path, strict=True)
    assert str(info.value) == f"{path}:2:1: unknown configuration field `foo_bar`"
    assert (info.value.key, info.value.line) == ("foo_bar", 2)


def test_malformed_toml_is_ignored_with_a_warning_that_points_at_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'model = "m"\nmodel_provider = \n')
    config = load(tmp_path)
    warning = config.warnings[0]
    assert warning.summary == "Invalid configuration; using defaults."
    assert warning.details is not None and warning.details.startswith(f"{path}:2:")
    params = warning.to_params()
    assert params["path"] == str(path) and params["range"]["start"]["line"] == 2
    assert config.model == DEFAULT_MODEL  # defaults, as Codex does


def test_malformed_toml_in_strict_mode_is_an_error_with_the_line(tmp_path: Path) -> None:
    write(tmp_path, 'model = "m"\nmodel_provider = \n')
    with pytest.raises(ConfigError) as info:
        load(tmp_path, strict=True)
    assert info.value.line == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model = 5\n", ":1:9: invalid type: integer `5`, expected a string"),
        (
            'approval_policy = "bogus"\n',
            ":1:19: unknown variant `bogus`, expected one of `untrusted`, `on-failure`, `on-request`, "
            "`granular`, `never`",
        ),
        (
            '[model_providers.p]\nname = "P"\nbase_url = "http://x"\nstream_max_retries = "x"\n',
            ':4:22: invalid type: string "x", expected u64',
        ),
        ('[model_providers.p]\nbase_url = "http://x"\n', ":1:1: missing field `name`"),
        ('[model_providers.p]\nname = "P"\nwire_api = "chat"\n', ':3:12: `wire_api = "chat"` is no longer supported.'),
        ('[model_providers.p]\nname = "P"\nwire_api = "grpc"\n', ":3:12: unknown variant `grpc`, expected `responses`"),
        ('[model_providers.p]\nname = "P"\nhttp_headers = { a = 1 }\n', ":3:22: invalid type: integer `1`, expected a string"),
    ],
)
def test_a_badly_typed_value_names_the_key_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load(tmp_path, strict=True)
    assert str(info.value).startswith(f"{path}{message}")
    config = load(tmp_path)
    assert config.warnings[0].summary == "Invalid configuration; using defaults."
    assert config.warnings[0].details == str(info.value)


def test_an_unknown_model_provider_in_the_file_falls_back_to_defaults(tmp_path: Path) -> None:
    write(tmp_path, 'model_provider = "nope"\n')
    config = load(tmp_path)
    assert config.warnings[0].to_params() == {
        "summary": "Invalid configuration; using defaults.",
        "details": "Model provider `nope` not found",
    }
    with pytest.raises(ConfigError, match="Model provider `nope` not found"):
        load(tmp_path, ["model_provider=nope"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a.b=1", (["a", "b"], 1)),
        ("model=gpt-5", (["model"], "gpt-5")),
        ('model="gpt-5"', (["model"], "gpt-5")),
        ("flag = true", (["flag"], True)),
        ("list=[1, 2]", (["list"], [1, 2])),
        ("t={a = 1}", (["t"], {"a": 1})),
        ("s=has = sign", (["s"], "has = sign")),
        ("path=/tmp/x y", (["path"], "/tmp/x y")),
    ],
)
def test_cli_overrides_parse_toml_values_or_fall_back_to_strings(
    text: str, expected: tuple[list[str], Any]
) -> None:
    assert parse_cli_override(text) == expected


def test_a_cli_override_without_equals_is_an_error_worded_like_codex() -> None:
    with pytest.raises(ConfigError) as info:
        parse_cli_override("novalue")
    assert str(info.value) == "error parsing -c overrides: Invalid override (missing '='): novalue"
    with pytest.raises(ConfigError, match="empty key"):
        parse_cli_override("=1")


def test_cli_overrides_win_over_the_file_and_merge_into_tables(tmp_path: Path) -> None:
    write(tmp_path, MOCK_CONFIG)
    config = load(tmp_path, ["model=gpt-x", "model_providers.mock_provider.stream_max_retries=3"])
    assert config.model == "gpt-x"
    assert config.provider.stream_max_retries == 3
    assert config.provider.base_url == "http://127.0.0.1:37121/v1"


def test_a_badly_typed_cli_override_is_an_error_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, ["model=5"])
    assert str(info.value) == "invalid type: integer `5`, expected a string\nin `model`\n"


def test_thread_overrides_accept_dotted_and_nested_keys_without_touching_the_base(tmp_path: Path) -> None:
    write(tmp_path, MOCK_CONFIG)
    base = load(tmp_path)
    thread = base.with_overrides(
        {
            "model_providers.other.name": "Other",
            "model_providers": {"other": {"base_url": "http://o/v1"}},
            "model_provider": "other",
            "model_reasoning_effort": "high",
            "developer_instructions": "be brief",
        }
    )
    assert thread.provider.name == "Other" and thread.provider.base_url == "http://o/v1"
    assert (thread.model_reasoning_effort, thread.developer_instructions) == ("high", "be brief")
    assert thread.layers[-1].kind == "thread"
    assert base.model_provider_id == "mock_provider" and base.model_reasoning_effort is None


def test_thread_overrides_warn_about_unknown_keys_as_session_flags(tmp_path: Path) -> None:
    thread = load(tmp_path).with_overrides({"foo": 1})
    assert summaries(thread) == [
        "Codex is ignoring 1 unrecognized configuration setting. Check for typos or deprecated settings.\n"
        "  session-flags: `foo` is ignored."
    ]


def test_a_badly_typed_thread_override_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path).with_overrides({"model": 5})
    assert str(info.value) == "invalid type: integer `5`, expected a string\nin `model`\n"


def test_the_scripted_provider_takes_a_script_path_from_config(tmp_path: Path) -> None:
    write(tmp_path, 'model_provider = "scripted"\n[model_providers.scripted]\nscript = "/x/demo.json"\n')
    config = load(tmp_path)
    assert config.provider.is_scripted and config.provider.script == "/x/demo.json"
    assert config.warnings == ()


def test_layer_versions_hash_the_table_like_codex() -> None:
    table = {
        "model": "mock-model",
        "approval_policy": "never",
        "sandbox_mode": "workspace-write",
        "model_provider": "mock_provider",
        "model_providers": {
            "mock_provider": {
                "name": "Mock provider",
                "base_url": "http://127.0.0.1:37121/v1",
                "wire_api": "responses",
                "request_max_retries": 0,
                "stream_max_retries": 0,
            }
        },
    }
    layer = ConfigLayer(kind="user", file="/h/config.toml", config=table)
    # Value observed in Codex's config/read {includeLayers:true}.
    assert layer.version == "sha256:514166051acca4cc81d8d0fed75a97df5b4bba0f7e0435b938c1ecd2c45ca9bd"
    assert ConfigLayer(kind="user", file=None, config={}).version.endswith(
        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    )


def test_codex_home_comes_from_the_environment_or_defaults_to_dot_pycodex() -> None:
    assert resolve_codex_home({"CODEX_HOME": "/srv/ch"}) == Path("/srv/ch")
    assert resolve_codex_home({}) == Path("~/.pycodex").expanduser()
    assert resolve_codex_home({"CODEX_HOME": ""}) == Path("~/.pycodex").expanduser()
