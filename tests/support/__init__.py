"""Shared test support: the Codex schema check and validating app-server clients (stdio and websocket).

Names resolve on first use, so `python -m bench` can import `tests.support.fake_model` without the test
extras (jsonschema) the schema check needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pycodex.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from pycodex.json_types import JsonObj

    from .appserver import OMIT, AppServerClient, Arrival, ProtocolViolation, ValidatingClient
    from .appserver_process import ServerProcess, app_server_env, default_argv, free_port, write_codex_config
    from .appserver_ws import WsAppServerClient
    from .schema import SchemaPair, SchemaValidator, find_codex_bin, generate_schema, load_schema_pair

_HOME = {
    "OMIT": "appserver",
    "AppServerClient": "appserver",
    "Arrival": "appserver",
    "JsonObj": "appserver",
    "ProtocolViolation": "appserver",
    "ValidatingClient": "appserver",
    "ServerProcess": "appserver_process",
    "app_server_env": "appserver_process",
    "default_argv": "appserver_process",
    "free_port": "appserver_process",
    "write_codex_config": "appserver_process",
    "WsAppServerClient": "appserver_ws",
    "SchemaPair": "schema",
    "SchemaValidator": "schema",
    "find_codex_bin": "schema",
    "generate_schema": "schema",
    "load_schema_pair": "schema",
}

__all__ = [
    "OMIT",
    "AppServerClient",
    "Arrival",
    "JsonObj",
    "ProtocolViolation",
    "SchemaPair",
    "SchemaValidator",
    "ServerProcess",
    "ValidatingClient",
    "WsAppServerClient",
    "app_server_env",
    "default_argv",
    "find_codex_bin",
    "free_port",
    "generate_schema",
    "load_schema_pair",
    "write_codex_config",
]


def __getattr__(name: str) -> Any:
    return _lazy(name)


_lazy = lazy_getattr(__name__, _HOME)
