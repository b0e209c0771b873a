"""``[environments.NAME] provider = ...`` tables: what they parse into, and the error each mistake gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_server.providers.base import Mount
from app_server.providers.config import ProviderConfigError, parse_provider_table
from app_server.startup import StartupError
from tests.providers.podman_support import write_environments
from tests.support.fake_model import model_config


def test_a_full_podman_table_parses_into_request_pool_and_engine_settings() -> None:
    config = parse_provider_table("box", {
        "provider": "podman", "image": "localhost/img", "cpus": 1.5, "memory": "1g", "pids_limit": 256,
        "mounts": ["/data:/mnt/data", "/work:/work:rw", {"source": "/a", "target": "/b", "read_only": False}],
        "env": {"LANG": "C.UTF-8"}, "pool_size": 2, "reap_interval_s": 5, "runtime": "", "url": "unix:///s.sock",
    })  # fmt: skip
    assert config.request.image == "localhost/img" and config.request.cpus == 1.5 and config.request.pids == 256
    assert config.request.mounts == (Mount(Path("/data"), Path("/mnt/data")), Mount(Path("/work"), Path("/work"), False),
                                     Mount(Path("/a"), Path("/b"), False))  # fmt: skip
    assert config.request.env == (("LANG", "C.UTF-8"),)
    assert (config.pool.size, config.pool.reap_interval_s) == (2, 5.0)
    assert config.runtime is None and config.url == "unix:///s.sock"
    assert config.ulimits == ("nofile=1024:1024", "nproc=1024:1024")  # this host's hard limits, by default


@pytest.mark.parametrize(("table", "message"), [
    ({"provider": "lxc"}, "environment `box`: provider must be one of podman, docker, kubernetes, got 'lxc'"),
    ({"provider": "podman", "pool": 2}, "environment `box`: unknown key(s) pool"),
    ({"provider": "podman", "pool_size": 1.5}, "environment `box`: pool_size must be a whole number"),
    ({"provider": "podman", "cpus": -1}, "environment `box`: cpus cannot be negative"),
    ({"provider": "podman", "mounts": ["data"]}, "environment `box`: mount 'data' is not /SRC:/DST[:ro|rw]"),
    ({"provider": "podman", "mounts": ["/a:/b:rx"]}, "environment `box`: mount '/a:/b:rx' is not /SRC:/DST[:ro|rw]"),
    ({"provider": "podman", "env": {"A": 1}}, "environment `box`: env must be a table of strings"),
    ({"provider": "podman", "network": "overlay"}, "environment `box`: network must be host, bridge or none"),
    ({"provider": "kubernetes"}, "environment `box`: the kubernetes provider needs relay_url (a relay the pods reach)"),
    ({"provider": "kubernetes", "relay_url": "http://relay:8080"},
     "environment `box`: relay_url needs a token in $PYCODEX_RELAY_TOKEN"),
])  # fmt: skip
def test_each_mistake_gets_an_error_naming_the_key(table: dict[str, object], message: str) -> None:
    with pytest.raises(ProviderConfigError) as raised:
        parse_provider_table("box", table, {})
    assert str(raised.value) == message


def test_a_relay_elsewhere_takes_its_token_from_the_named_variable() -> None:
    table = {"provider": "kubernetes", "relay_url": "http://relay:8080", "relay_token_env": "MY_TOKEN", "image": "i"}
    config = parse_provider_table("k", table, {"MY_TOKEN": "secret"})
    assert config.relay is not None and config.relay.registry_url == "http://relay:8080"
    assert "secret" not in repr(config)


async def test_a_bad_provider_table_stops_the_server_at_start_up_with_the_reason(
    app_server, codex_home: Path
) -> None:
    model_config(codex_home, "http://127.0.0.1:9/v1")
    write_environments(codex_home, pool_size="two")
    with pytest.raises(StartupError) as raised:
        await app_server(initialize=False)
    assert str(raised.value) == "environments.toml: environment `box`: pool_size must be a whole number"
