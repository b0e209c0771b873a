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
from typing import Literal
from urllib.parse import unquote

__all__ = ["DEFAULT_ENVIRONMENT", "Exporter", "OtelSettings", "Protocol", "Signal", "resolve"]

DEFAULT_ENVIRONMENT = "dev"
Signal = Literal["traces", "metrics", "logs"]
Protocol = Literal["http/protobuf", "http/json", "grpc"]


class Exporter:
    """Where one signal goes: an OTLP endpoint, its protocol, headers and TLS files (read-only by use).

    A plain class rather than a dataclass: the config loader imports this module at start-up, and building
    two dataclasses cost a millisecond there."""

    __slots__ = ("ca_certificate", "client_certificate", "client_private_key", "endpoint", "headers", "protocol")

    def __init__(self, endpoint: str, protocol: Protocol = "http/protobuf", headers: Mapping[str, str] | None = None,
                 ca_certificate: str | None = None, client_certificate: str | None = None,
                 client_private_key: str | None = None) -> None:
        self.endpoint = endpoint
        self.protocol: Protocol = protocol
        self.headers: Mapping[str, str] = dict(headers or {})
        self.ca_certificate = ca_certificate
        self.client_certificate = client_certificate
        self.client_private_key = client_private_key

    def _fields(self) -> tuple[object, ...]:
        return (self.endpoint, self.protocol, dict(self.headers), self.ca_certificate, self.client_certificate,
                self.client_private_key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Exporter) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # equal by value, and its headers are a dict

    def __repr__(self) -> str:  # the headers' names only: their values may be credentials
        return f"Exporter({self.endpoint!r}, {self.protocol!r}, headers={sorted(self.headers)})"


ExporterChoice = Exporter | Literal["disabled"] | None


class OtelSettings:
    """``[otel]`` as checked by the loader (read-only by use). An exporter is None when its key is absent
    (the environment decides), ``"disabled"`` when it says ``"none"`` or ``"statsig"``."""

    __slots__ = ("attributes", "environment", "log_user_prompt", "logs", "metrics", "traces")

    def __init__(self, log_user_prompt: bool = False, environment: str = DEFAULT_ENVIRONMENT,
                 traces: ExporterChoice = None, metrics: ExporterChoice = None, logs: ExporterChoice = None,
                 attributes: Mapping[str, str] | None = None) -> None:
        self.log_user_prompt = log_user_prompt
        self.environment = environment
        self.traces: ExporterChoice = traces
        self.metrics: ExporterChoice = metrics
        self.logs: ExporterChoice = logs
        #: ``[otel].span_attributes``: extra resource attributes (service, team...).
        self.attributes: Mapping[str, str] = dict(attributes or {})

    def _fields(self) -> tuple[object, ...]:
        return (self.log_user_prompt, self.environment, self.traces, self.metrics, self.logs, dict(self.attributes))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OtelSettings) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"OtelSettings(log_user_prompt={self.log_user_prompt}, environment={self.environment!r}, "
                f"traces={self.traces!r}, metrics={self.metrics!r}, logs={self.logs!r})")


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
    configured: ExporterChoice = getattr(settings, signal)
    if configured == "disabled":
        return None
    if isinstance(configured, Exporter):
        return configured
    return _from_environment(signal, env)
