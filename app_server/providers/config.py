"""``[environments.NAME]`` tables with a ``provider``: parsed into a box request, pool and engine settings.

In ``CODEX_HOME/environments.toml``, beside the ``url = "ws://…"`` environments::

    default = "box"

    [environments.box]
    provider = "podman"          # "podman", "docker" or "kubernetes"
    image = "localhost/my-image" # default: the local pycodex box image (podman/docker)
    cpus = 1.5
    memory = "1g"
    pids_limit = 512
    mounts = ["/data:/data:ro"]  # "SRC:DST[:ro|rw]", read-only unless ":rw"
    env = { LANG = "C.UTF-8" }
    network = "host"             # a thread with network access: "host" or "bridge"; "none": never any
    pool_size = 2                # boxes kept warm for fast thread start
    reap_interval_s = 30
    start_timeout_s = 60

Podman/Docker also take ``engine``, ``url`` (a remote engine socket), ``runtime`` and ``ulimits``; Kubernetes
takes ``namespace``, ``relay_url``, ``relay_token_env`` (a cluster needs a relay it can reach) and
``relay_forward`` (docs/kubernetes.md).
Every mistake is a ``ProviderConfigError`` naming the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app_server.providers.base import BoxRequest, Mount
from app_server.providers.pool import PoolSettings
from app_server.providers.relay_link import ExternalRelay

__all__ = ["PROVIDERS", "ProviderConfig", "ProviderConfigError", "parse_provider_table"]

PROVIDERS = ("podman", "docker", "kubernetes")
_KNOWN = {
    "provider", "image", "cpus", "memory", "pids_limit", "mounts", "env", "pool_size", "reap_interval_s",
    "start_timeout_s", "network", "engine", "url", "runtime", "ulimits", "namespace", "relay_url",
    "relay_token_env", "relay_forward", "id",
}  # fmt: skip


class ProviderConfigError(ValueError):
    """An ``[environments.NAME]`` provider table is not usable; the message names the key."""


@dataclass(frozen=True)
class ProviderConfig:
    """One provided environment's settings, as parsed."""

    name: str
    provider: str
    request: BoxRequest
    pool: PoolSettings
    engine: str | None = None
    url: str | None = None
    runtime: str | None = "runc"
    ulimits: tuple[str, ...] = ("nofile=1024:1024", "nproc=1024:1024")
    namespace: str = "default"
    relay: ExternalRelay | None = None
    #: Kubernetes: ``LOCAL=HOST:PORT`` forwards a sidecar in each pod makes (the relay's Service on loopback).
    relay_forward: tuple[str, ...] = ()


def _mount(name: str, value: object) -> Mount:
    if isinstance(value, dict):
        source, target = value.get("source"), value.get("target", value.get("source"))
        read_only = value.get("read_only", True)
        if not isinstance(source, str) or not isinstance(target, str) or not isinstance(read_only, bool):
            raise ProviderConfigError(f"environment `{name}`: a mount table needs source, target, read_only")
        return Mount(Path(source), Path(target), read_only)
    if not isinstance(value, str) or not value:
        raise ProviderConfigError(f"environment `{name}`: mounts must be strings SRC:DST[:ro|rw]")
    parts = value.split(":")
    if len(parts) == 1:
        parts = [parts[0], parts[0]]
    if len(parts) == 2:
        parts.append("ro")
    if len(parts) != 3 or parts[2] not in ("ro", "rw") or not parts[0].startswith("/") or not parts[1].startswith("/"):
        raise ProviderConfigError(f"environment `{name}`: mount {value!r} is not /SRC:/DST[:ro|rw]")
    return Mount(Path(parts[0]), Path(parts[1]), parts[2] == "ro")


def _number(name: str, table: Mapping[str, object], key: str, *, integer: bool = False) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
        raise ProviderConfigError(f"environment `{name}`: {key} must be a {'whole ' if integer else ''}number")
    if value < 0:
        raise ProviderConfigError(f"environment `{name}`: {key} cannot be negative")
    return float(value)


def _strings(name: str, table: Mapping[str, object], key: str) -> tuple[str, ...] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProviderConfigError(f"environment `{name}`: {key} must be a list of strings")
    return tuple(str(v) for v in value)


def _text(name: str, table: Mapping[str, object], key: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ProviderConfigError(f"environment `{name}`: {key} must be a non-empty string")
    return value


def parse_provider_table(name: str, table: Mapping[str, object], environ: Mapping[str, str] = os.environ) -> ProviderConfig:
    """Parse the environment table ``name`` (it has a ``provider`` key)."""
    provider = table.get("provider")
    if provider not in PROVIDERS:
        raise ProviderConfigError(f"environment `{name}`: provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
    unknown = sorted(set(table) - _KNOWN)
    if unknown:
        raise ProviderConfigError(f"environment `{name}`: unknown key(s) {', '.join(unknown)}")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ProviderConfigError(f"environment `{name}`: env must be a table of strings")
    mounts = table.get("mounts", [])
    if not isinstance(mounts, list):
        raise ProviderConfigError(f"environment `{name}`: mounts must be a list")
    network = _text(name, table, "network") or "host"
    if network not in ("host", "none", "bridge"):
        raise ProviderConfigError(f"environment `{name}`: network must be host, bridge or none")
    pids = _number(name, table, "pids_limit", integer=True)
    request = BoxRequest(
        image=_text(name, table, "image"), cpus=_number(name, table, "cpus"), memory=_text(name, table, "memory"),
        pids=int(pids) if pids is not None else None, mounts=tuple(_mount(name, m) for m in mounts),
        env=tuple((str(k), str(v)) for k, v in env.items()), network=network,
    )  # fmt: skip
    size = _number(name, table, "pool_size", integer=True)
    reap = _number(name, table, "reap_interval_s")
    start = _number(name, table, "start_timeout_s")
    pool = PoolSettings(size=int(size or 0), reap_interval_s=reap or 30.0, start_timeout_s=start or 60.0)
    relay: ExternalRelay | None = None
    relay_url = _text(name, table, "relay_url")
    if relay_url is not None:
        token_var = _text(name, table, "relay_token_env") or "PYCODEX_RELAY_TOKEN"
        token = environ.get(token_var, "").strip()
        if not token:
            raise ProviderConfigError(f"environment `{name}`: relay_url needs a token in ${token_var}")
        relay = ExternalRelay(relay_url, token)
    elif provider == "kubernetes":
        raise ProviderConfigError(f"environment `{name}`: the kubernetes provider needs relay_url (a relay the pods reach)")
    forwards = _strings(name, table, "relay_forward") or ()
    for spec in forwards:
        local, sep, target = spec.partition("=")
        if not sep or not local.isdigit() or ":" not in target:
            raise ProviderConfigError(f"environment `{name}`: relay_forward {spec!r} is not LOCALPORT=HOST:PORT")
    ulimits = _strings(name, table, "ulimits")
    runtime = table.get("runtime", "runc")
    if runtime is not None and not isinstance(runtime, str):
        raise ProviderConfigError(f"environment `{name}`: runtime must be a string (\"\" for the engine's default)")
    return ProviderConfig(
        name=name, provider=str(provider), request=request, pool=pool, engine=_text(name, table, "engine"),
        url=_text(name, table, "url"), runtime=runtime or None,
        ulimits=ulimits if ulimits is not None else ProviderConfig.ulimits,
        namespace=_text(name, table, "namespace") or "default", relay=relay, relay_forward=forwards,
    )  # fmt: skip
