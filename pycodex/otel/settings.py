"""What ``[otel]`` in config.toml and the standard ``OTEL_*`` variables ask for, resolved per signal.

Codex's keys and shapes (codex-rs ``OtelConfigToml``): ``log_user_prompt`` (default false),
``environment`` (default "dev"), and one exporter per signal, ``exporter`` (logs), ``trace_exporter``
(traces) and ``metrics_exporter`` (metrics), each ``"none"``, ``"statsig"`` (OpenAI's own sink: pycodex
exports nothing for it) or ``{ otlp-http = { endpoint, protocol, headers, tls } }`` /
``{ otlp-grpc = { endpoint, headers, tls } }``. A signal whose key is absent takes the standard variables
(``OTEL_EXPORTER_OTLP_[SIGNAL_]ENDPOINT``, ``_PROTOCOL``, ``_HEADERS``, ``OTEL_[SIGNAL]_EXPORTER=none``),
so a collector set up for the rest of a system picks pycodex up too.

Standard library only: the config loader imports it at start-up; the SDK is imported only when a signal
is exported (:func:`pycodex.otel.start`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import unquote

__all__ = ["DEFAULT_ENVIRONMENT", "Exporter", "OtelSettings", "Protocol", "Signal", "resolve"]

DEFAULT_ENVIRONMENT = "dev"
Signal = Literal["traces", "metrics", "logs"]
Protocol = Literal["http/protobuf", "http/json", "grpc"]


@dataclass(frozen=True, slots=True)
class Exporter:
    """Where one signal goes: an OTLP endpoint, its protocol, headers and TLS files."""

    endpoint: str
    protocol: Protocol = "http/protobuf"
    headers: Mapping[str, str] = field(default_factory=dict)
    ca_certificate: str | None = None
    client_certificate: str | None = None
    client_private_key: str | None = None


@dataclass(frozen=True, slots=True)
class OtelSettings:
    """``[otel]`` as checked by the loader. An exporter field is None when the key is absent (the
    environment decides), :data:`DISABLED` when it says ``"none"`` or ``"statsig"``."""

    log_user_prompt: bool = False
    environment: str = DEFAULT_ENVIRONMENT
    traces: Exporter | Literal["disabled"] | None = None
    metrics: Exporter | Literal["disabled"] | None = None
    logs: Exporter | Literal["disabled"] | None = None
    #: ``[otel].span_attributes``: extra resource attributes (service, team...).
    attributes: Mapping[str, str] = field(default_factory=dict)


def _parse_headers(text: str) -> dict[str, str]:
    """``OTEL_EXPORTER_OTLP_HEADERS``: ``k1=v1,k2=v2``, values percent-decoded (the spec's format)."""
    headers: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep and key.strip():
            headers[unquote(key.strip())] = unquote(value.strip())
    return headers


def _from_environment(signal: Signal, env: Mapping[str, str]) -> Exporter | None:
    """The exporter the standard variables set up for ``signal``, or None when they set up none."""
    upper = signal.upper()
    if env.get(f"OTEL_{upper}_EXPORTER", "").strip().lower() == "none":
        return None
    specific = env.get(f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT", "").strip()
    generic = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if not specific and not generic:
        return None
    raw_protocol = (env.get(f"OTEL_EXPORTER_OTLP_{upper}_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                    or "http/protobuf").strip()
    protocol: Protocol = "grpc" if raw_protocol == "grpc" else (
        "http/json" if raw_protocol == "http/json" else "http/protobuf")
    if specific:
        endpoint = specific
    elif protocol == "grpc":
        endpoint = generic
    else:  # the spec: the generic endpoint is a base URL, each signal's path appended
        endpoint = f"{generic.rstrip('/')}/v1/{signal}"
    headers = _parse_headers(env.get("OTEL_EXPORTER_OTLP_HEADERS", ""))
    headers.update(_parse_headers(env.get(f"OTEL_EXPORTER_OTLP_{upper}_HEADERS", "")))
    return Exporter(endpoint=endpoint, protocol=protocol, headers=headers,
                    ca_certificate=env.get(f"OTEL_EXPORTER_OTLP_{upper}_CERTIFICATE")
                    or env.get("OTEL_EXPORTER_OTLP_CERTIFICATE"))


def resolve(settings: OtelSettings, signal: Signal, env: Mapping[str, str]) -> Exporter | None:
    """The exporter of ``signal``: ``[otel]``'s when it names one, else the environment's; None: not exported.

    ``OTEL_SDK_DISABLED=true`` turns every signal off, as in every OpenTelemetry SDK."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    configured = getattr(settings, signal)
    if configured == "disabled":
        return None
    if isinstance(configured, Exporter):
        return configured
    return _from_environment(signal, env)
