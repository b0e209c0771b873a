"""Environments that start themselves: one box (container, pod) per thread, reached through the relay.

``environments.toml`` names a provider (``[environments.NAME] provider = "podman"``, see
``app_server.providers.config``); ``app_server.environments`` then asks the pool built here for each
thread's box. Modules:

* ``base``: the provider interface (``BoxProvider``), requests, labels, errors;
* ``pool``: leases, the warm pool and the reaper; ``relay_link``: the relay and per-box tokens;
* ``podman``: Podman/Docker through their CLI; ``image``: the local image recipe; ``box_main``: a box's
  first process; ``kubernetes``: pods through the official client;
* ``config``: the ``[environments.NAME]`` table.
"""

from __future__ import annotations

from collections.abc import Mapping

from app_server.providers.base import BoxProvider, EngineUnavailable, ProviderError
from app_server.providers.config import ProviderConfig, ProviderConfigError, parse_provider_table
from app_server.providers.kubernetes import KubernetesProvider
from app_server.providers.podman import PodmanProvider, PodmanSettings
from app_server.providers.pool import BoxPool, Lease
from app_server.providers.relay_link import RelayLink

__all__ = [
    "BoxPool",
    "EngineUnavailable",
    "Lease",
    "ProviderConfig",
    "ProviderConfigError",
    "ProviderError",
    "make_pool",
    "parse_provider_table",
]


def make_provider(config: ProviderConfig) -> BoxProvider:
    """The engine ``config.provider`` names, set up as the table says."""
    if config.provider == "kubernetes":
        return KubernetesProvider(namespace=config.namespace, image=config.request.image,
                                  relay_forward=config.relay_forward)
    settings = PodmanSettings(engine=config.engine or config.provider, url=config.url, runtime=config.runtime,
                              ulimits=config.ulimits)
    return PodmanProvider(settings)


def make_pool(name: str, table: Mapping[str, object], environ: Mapping[str, str]) -> BoxPool:
    """The pool of the provided environment ``name`` (raises ``ProviderConfigError`` for a bad table)."""
    config = parse_provider_table(name, table, environ)
    return BoxPool(name, make_provider(config), config.request, config.pool, RelayLink(config.relay))
