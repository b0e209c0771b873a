"""A local OTLP/HTTP collector for tests: a thread serving 127.0.0.1, decoding what it receives with the
``opentelemetry-proto`` messages, and waking waiters (bounded) as spans arrive."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def value(any_value: AnyValue) -> Any:
    """An OTLP attribute value as Python (strings, numbers, bools, lists)."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


@dataclass
class Span:
    """One received span, its ids as hex."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    status_code: int
    status_message: str
    resource: dict[str, Any]


class Receiver:
    """What the collector got: decoded spans, metric names, log records, and every raw body."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.metrics: dict[str, list[Any]] = {}
        self.logs: list[tuple[str, str, str]] = []  # (body, trace id, span id)
        self.bodies: list[bytes] = []
        self.paths: list[str] = []
        self._changed = threading.Condition()
        self.url = ""

    def take(self, path: str, body: bytes, content_type: str) -> None:
        """Decode one export request (the handler thread)."""
        assert content_type == "application/x-protobuf", content_type
        with self._changed:
            self.bodies.append(body)
            self.paths.append(path)
            if path.endswith("/v1/traces"):
                self._spans(body)
            elif path.endswith("/v1/metrics"):
                self._metrics(body)
            elif path.endswith("/v1/logs"):
                self._logs(body)
            self._changed.notify_all()

    def _spans(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for s in scope.spans:
                    self.spans.append(Span(
                        name=s.name, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(),
                        parent_id=s.parent_span_id.hex(), kind=s.kind,
                        attributes={a.key: value(a.value) for a in s.attributes},
                        status_code=s.status.code, status_message=s.status.message, resource=resource,
                    ))

    def _metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest.FromString(body)
        for resource_metrics in request.resource_metrics:
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    self.metrics.setdefault(metric.name, []).append(metric)

    def _logs(self, body: bytes) -> None:
        request = ExportLogsServiceRequest.FromString(body)
        for resource_logs in request.resource_logs:
            for scope in resource_logs.scope_logs:
                for record in scope.log_records:
                    self.logs.append((str(value(record.body)), record.trace_id.hex(), record.span_id.hex()))

    def wait_for(self, ready: Callable[[Receiver], bool], timeout: float = 15.0) -> None:
        """Block until ``ready(self)`` (checked under the lock as exports arrive); AssertionError at ``timeout``."""
        with self._changed:
            if not self._changed.wait_for(lambda: ready(self), timeout):
                names = sorted({s.name for s in self.spans})
                raise AssertionError(f"the collector did not get what was expected in {timeout}s; spans: {names}")

    def named(self, prefix: str) -> list[Span]:
        """The spans whose name starts with ``prefix``."""
        with self._changed:
            return [s for s in self.spans if s.name.startswith(prefix)]


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """A running collector on a free port of 127.0.0.1 (``receiver.url``, no path); stopped on exit."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            receiver.take(self.path, body, self.headers.get("Content-Type", ""))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows failures, not hits
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
