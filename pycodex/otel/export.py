"""``pycodex trace export --otlp URL FILE``: a recorded trace (``--trace``) sent to a collector as spans.

The trace's timeline (:func:`pycodex.trace.timeline.build_timeline`) becomes one OpenTelemetry trace,
shaped like the live export (:mod:`pycodex.otel`): a root span for the file, a span per client request,
each turn under the ``turn/start`` that began it, and under a turn its model round trips, tool items,
approval waits and exec-server calls. A trace records monotonic offsets only, so the spans are placed in
wall-clock time from the file's last write (when the server stopped recording) back.

What is exported is what the live export sends: names, methods, item types, statuses, models, latencies
and error texts, never prompts, messages or command lines (the trace holds them; the collector does not
need them), every text passed through the recorder's redactor once more.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from pycodex import __version__
from pycodex.json_types import JsonObj, JsonValue
from pycodex.otel.exporters import EXPORT_TIMEOUT_S, span_exporter
from pycodex.otel.settings import Exporter, Protocol
from pycodex.trace.redact import Redactor

__all__ = ["ExportResult", "Exporter", "export_timeline", "traces_endpoint"]

_NS = 1_000_000_000

ExportResult = tuple[int, str]  # (spans sent, trace id as hex)


def traces_endpoint(url: str, protocol: Protocol) -> str:
    """The traces URL for ``url``: a collector's base URL gets ``/v1/traces`` (OTLP/HTTP), a full one is kept."""
    if protocol == "grpc":
        return url
    path = urlsplit(url).path
    return f"{url.rstrip('/')}/v1/traces" if path in ("", "/") else url


def export_timeline(timeline: JsonObj, *, name: str, ended_at: float, exporter: Exporter,
                    environ: Mapping[str, str], timeout: float = EXPORT_TIMEOUT_S) -> ExportResult:
    """Send ``timeline`` (of the trace file ``name``, whose recording ended at ``ended_at``, Unix seconds)
    as spans through ``exporter``, in one export request; returns how many spans went and the trace id.
    Raises RuntimeError when the collector did not take them within ``timeout`` seconds (retries included)."""
    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME") or "pycodex",
                                "service.version": str(timeline.get("server") or __version__),
                                "pycodex.trace.file": name})
    provider = TracerProvider(resource=resource)
    finished = InMemorySpanExporter()  # the spans are built first, then sent in one request
    provider.add_span_processor(SimpleSpanProcessor(finished))
    tracer = provider.get_tracer("pycodex.trace.export", __version__)
    duration = float(_number(timeline.get("duration")) or 0.0)
    builder = _Spans(tracer, Redactor.from_environment(environ), (ended_at - duration) * _NS)
    root = builder.span(f"pycodex trace {name}", 0.0, None, None, {"pycodex.trace.events": timeline.get("events")})
    trace_id = format(root.get_span_context().trace_id, "032x")
    builder.tree(timeline, root)
    root.end(end_time=builder.at(duration))
    spans = finished.get_finished_spans()
    sender = span_exporter(exporter, timeout)
    try:
        result = sender.export(spans)
    finally:
        sender.shutdown()
        provider.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise RuntimeError(f"the collector at {exporter.endpoint} did not take the spans within {timeout:g} s")
    return len(spans), trace_id


def _number(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class _Spans:
    """Builds the spans of one timeline at their recorded offsets."""

    def __init__(self, tracer: trace.Tracer, redactor: Redactor, origin_ns: float) -> None:
        self._tracer = tracer
        self._redact = redactor
        self._origin = origin_ns

    def at(self, offset: float) -> int:
        """The wall-clock time (ns) of an offset into the trace."""
        return int(self._origin + offset * _NS)

    def span(self, name: str, start: float, end: float | None, parent: trace.Span | None,
             attributes: Mapping[str, JsonValue], *, kind: SpanKind = SpanKind.INTERNAL,
             error: str | None = None) -> trace.Span:
        """One span from ``start`` to ``end`` (offsets), ended; ``end`` None: left open for the caller."""
        context = trace.set_span_in_context(parent) if parent is not None else None
        clean: dict[str, str | int | float | bool | list[str]] = {
            k: (self._redact.text(v) if isinstance(v, str) else v) for k, v in attributes.items()
            if isinstance(v, str | int | float | bool)}
        clean.update({k: [self._redact.text(str(x)) for x in v] for k, v in attributes.items() if isinstance(v, list)})
        span = self._tracer.start_span(name, context=context, kind=kind, attributes=clean, start_time=self.at(start))
        if error:
            span.set_status(Status(StatusCode.ERROR, self._redact.text(error)[:1024]))
        if end is not None:
            span.end(end_time=self.at(max(end, start)))
        return span

    def tree(self, timeline: JsonObj, root: trace.Span) -> None:
        """The requests under ``root``, each turn under its turn/start, a turn's work under the turn."""
        starts: list[tuple[float, trace.Span]] = []
        for request in _dicts(timeline.get("requests")):
            t = float(_number(request.get("t")) or 0.0)
            latency = _number(request.get("latency"))
            method = str(request.get("method"))
            kind = SpanKind.SERVER if request.get("from") == "client" else SpanKind.CLIENT
            span = self.span(method, t, t + latency if latency is not None else t, root,
                             {"rpc.system": "jsonrpc", "rpc.method": method, "rpc.jsonrpc.request_id": str(request.get("id"))},
                             kind=kind, error=_text(request.get("error")))
            if method == "turn/start":
                starts.append((t, span))
        for turn in _dicts(timeline.get("turns")):
            start = float(_number(turn.get("start")) or 0.0)
            parent = next((span for t, span in reversed(starts) if t <= start), root)
            self._turn(turn, start, parent)

    def _turn(self, turn: JsonObj, start: float, parent: trace.Span) -> None:
        end = _number(turn.get("end"))
        status = str(turn.get("status"))
        errors = [str(e.get("what")) for e in _dicts(turn.get("errors"))]
        span = self.span("invoke_agent pycodex", start, None, parent, {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "pycodex",
            "gen_ai.conversation.id": str(turn.get("threadId")), "pycodex.turn.id": str(turn.get("id")),
            "pycodex.turn.status": status}, error="; ".join(errors) if status == "failed" else None)
        for model in _dicts(turn.get("model")):
            m_start = float(_number(model.get("start")) or start)
            output = [str(o) for o in model.get("output") or [] if isinstance(o, str)]
            finish = "tool_calls" if "function_call" in output or "custom_tool_call" in output else "stop"
            self.span(f"chat {model.get('model')}", m_start, _number(model.get("end")) or end, span, {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": str(model.get("model")),
                "gen_ai.response.finish_reasons": [finish], "pycodex.model.events": model.get("events"),
                "pycodex.model.status": str(model.get("status"))},
                kind=SpanKind.CLIENT, error=None if model.get("status") in ("completed", "open") else str(model.get("status")))
        for item in _dicts(turn.get("items")):
            if item.get("tool"):
                i_start = float(_number(item.get("start")) or start)
                failed = item.get("status") in ("failed", "declined")
                self.span(f"execute_tool {item.get('type')}", i_start, _number(item.get("end")) or end, span, {
                    "gen_ai.operation.name": "execute_tool", "pycodex.item.type": str(item.get("type")),
                    "pycodex.item.status": str(item.get("status"))}, error=str(item.get("status")) if failed else None)
        for approval in _dicts(turn.get("approvals")):
            a_start = float(_number(approval.get("t")) or start)
            self.span(f"approval {approval.get('method', 'request')}", a_start, _number(approval.get("end")) or end, span,
                      {"pycodex.approval.decision": str(approval.get("decision"))})
        for call in _dicts(turn.get("exec")):
            c_start = float(_number(call.get("t")) or start)
            latency = _number(call.get("latency"))
            self.span(f"exec {call.get('method')}", c_start, c_start + latency if latency is not None else end, span,
                      {"rpc.system": "jsonrpc", "rpc.method": str(call.get("method"))}, kind=SpanKind.CLIENT,
                      error=_text(call.get("error")))
        span.end(end_time=self.at(end if end is not None else start))


def _dicts(value: JsonValue) -> list[JsonObj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(value: JsonValue) -> str | None:
    return str(value) if value else None
