"""Shared test support: the Codex schema check and validating app-server clients (stdio and websocket)."""

from .appserver import OMIT, AppServerClient, Arrival, JsonObj, ProtocolViolation, ValidatingClient
from .appserver_process import ServerProcess, app_server_env, default_argv, free_port, write_codex_config
from .appserver_ws import WsAppServerClient
from .schema import SchemaPair, SchemaValidator, find_codex_bin, generate_schema, load_schema_pair

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
