"""``[otel]``: checked with the rest of config.toml, so a bad value fails the load at its file:line:col.

The keys and shapes are Codex's (see :mod:`pycodex.otel.settings`); the messages are serde's, as for every
other key. What the settings do is :mod:`pycodex.otel`'s business.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from app_server.config import schema
from pycodex.otel.settings import DEFAULT_ENVIRONMENT, Exporter, OtelSettings

__all__ = ["otel_settings"]

_EXPORTER_VARIANTS = ("none", "statsig", "otlp-http", "otlp-grpc")
_HTTP_PROTOCOLS = ("binary", "json")
_TLS_KEYS = ("ca_certificate", "client_certificate", "client_private_key")
#: Codex's (and its schema's) keys of `[otel]`; `span_attributes` and `tracestate` come from later Codex
#: releases and are accepted too.
_KEYS = ("log_user_prompt", "environment", "exporter", "trace_exporter", "metrics_exporter", "span_attributes",
         "tracestate")


def otel_settings(raw: Mapping[str, object]) -> OtelSettings:
    """The ``[otel]`` table of the merged config as settings; raises ``schema.Invalid`` at the bad key."""
    table = schema.opt_table(raw, "otel", [])
    if table is None:
        return OtelSettings()
    path = ["otel"]
    for key in table:
        if key not in _KEYS:
            raise schema.Invalid([*path, key], f"unknown field `{key}`, expected one of "
                                 + ", ".join(f"`{k}`" for k in _KEYS))
    schema.opt_table(table, "tracestate", path)
    return OtelSettings(
        log_user_prompt=bool(schema.opt_bool(table, "log_user_prompt", path)),
        environment=schema.opt_str(table, "environment", path) or DEFAULT_ENVIRONMENT,
        traces=_exporter(table, "trace_exporter", path),
        metrics=_exporter(table, "metrics_exporter", path),
        logs=_exporter(table, "exporter", path),
        attributes=schema.opt_str_map(table, "span_attributes", path) or {},
    )


def _exporter(table: Mapping[str, object], key: str, path: list[str]) -> Exporter | Literal["disabled"] | None:
    value = table.get(key)
    if value is None:
        return None
    here = [*path, key]
    if isinstance(value, str):
        if value in ("none", "statsig"):  # statsig is OpenAI's own metrics sink: nothing to send it here
            return "disabled"
        raise schema.Invalid(here, f"unknown variant `{value}`, expected one of "
                             + ", ".join(f"`{v}`" for v in _EXPORTER_VARIANTS))
    if not isinstance(value, Mapping) or len(value) != 1:
        raise schema.Invalid(here, f"invalid type: {schema.describe(value)}, expected an exporter: "
                             '"none", "statsig", { otlp-http = {...} } or { otlp-grpc = {...} }')
    (variant,) = value.keys()
    if variant not in ("otlp-http", "otlp-grpc"):
        raise schema.Invalid([*here, str(variant)], f"unknown variant `{variant}`, expected one of "
                             + ", ".join(f"`{v}`" for v in _EXPORTER_VARIANTS))
    inner = schema.opt_table(value, variant, here)
    assert inner is not None  # one key, just read
    where = [*here, variant]
    endpoint = schema.opt_str(inner, "endpoint", where)
    if endpoint is None:
        raise schema.Invalid(where, "missing field `endpoint`")
    protocol: Literal["http/protobuf", "http/json", "grpc"] = "grpc"
    if variant == "otlp-http":
        chosen = schema.opt_variant(inner, "protocol", where, _HTTP_PROTOCOLS)
        if chosen is None:
            raise schema.Invalid(where, "missing field `protocol`")
        protocol = "http/json" if chosen == "json" else "http/protobuf"
    tls = schema.opt_table(inner, "tls", where) or {}
    files = {name: schema.opt_str(tls, name, [*where, "tls"]) for name in _TLS_KEYS}
    return Exporter(endpoint=endpoint, protocol=protocol, headers=schema.opt_str_map(inner, "headers", where) or {},
                    ca_certificate=files["ca_certificate"], client_certificate=files["client_certificate"],
                    client_private_key=files["client_private_key"])
