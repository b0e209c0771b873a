"""The OpenTelemetry SDK's OTLP exporters for one :class:`~pycodex.otel.settings.Exporter`.

OTLP over HTTP sends protobuf (``protocol = "binary"``); ``"json"`` is sent as protobuf too, since the
Python SDK has no stable JSON exporter and the OTLP specification has every HTTP receiver take both. OTLP
over gRPC needs ``grpcio``, which the ``otel`` extra installs; it is imported only for a gRPC exporter.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs.export import LogRecordExporter
from opentelemetry.sdk.metrics.export import MetricExporter
from opentelemetry.sdk.trace.export import SpanExporter

from pycodex.otel.settings import Exporter

if TYPE_CHECKING:
    import grpc

__all__ = ["EXPORT_TIMEOUT_S", "log_exporter", "metric_exporter", "span_exporter"]

#: How long one export may take: a dead collector costs a turn's flush at most this (in the background).
EXPORT_TIMEOUT_S = 10.0


def span_exporter(exporter: Exporter, timeout: float = EXPORT_TIMEOUT_S) -> SpanExporter:
    """The span exporter sending to ``exporter``; one export (retries included) gives up after ``timeout`` s."""
    if exporter.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter

        return GrpcSpanExporter(**_grpc_options(exporter), timeout=timeout)
    return OTLPSpanExporter(**_http_options(exporter), timeout=timeout)


def metric_exporter(exporter: Exporter) -> MetricExporter:
    """The metric exporter sending to ``exporter``."""
    if exporter.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetricExporter,
        )

        return GrpcMetricExporter(**_grpc_options(exporter), timeout=EXPORT_TIMEOUT_S)
    return OTLPMetricExporter(**_http_options(exporter), timeout=EXPORT_TIMEOUT_S)


def log_exporter(exporter: Exporter) -> LogRecordExporter:
    """The log record exporter sending to ``exporter``."""
    if exporter.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter

        return GrpcLogExporter(**_grpc_options(exporter), timeout=EXPORT_TIMEOUT_S)
    return OTLPLogExporter(**_http_options(exporter), timeout=EXPORT_TIMEOUT_S)


def _http_options(exporter: Exporter) -> dict[str, Any]:
    """The OTLP/HTTP exporters' shared keyword arguments: where, headers and the TLS files."""
    return {"endpoint": exporter.endpoint, "headers": dict(exporter.headers),
            "certificate_file": exporter.ca_certificate, "client_certificate_file": exporter.client_certificate,
            "client_key_file": exporter.client_private_key}


def _grpc_options(exporter: Exporter) -> dict[str, Any]:
    """The OTLP/gRPC exporters' shared keyword arguments: where, headers and the channel's security."""
    return {"endpoint": exporter.endpoint, "headers": dict(exporter.headers),
            "credentials": _grpc_credentials(exporter), "insecure": _insecure(exporter)}


def _insecure(exporter: Exporter) -> bool:
    """A plain-text gRPC channel for an ``http://`` endpoint (a local collector), TLS otherwise."""
    return exporter.endpoint.startswith("http://")


def _grpc_credentials(exporter: Exporter) -> grpc.ChannelCredentials | None:
    """TLS credentials from ``[otel]``'s ``tls`` files; None: the exporter's defaults."""
    if not (exporter.ca_certificate or exporter.client_certificate):
        return None
    import grpc

    def read(path: str | None) -> bytes | None:
        return Path(path).read_bytes() if path else None

    return grpc.ssl_channel_credentials(root_certificates=read(exporter.ca_certificate),
                                        private_key=read(exporter.client_private_key),
                                        certificate_chain=read(exporter.client_certificate))
