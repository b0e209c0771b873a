"""The server's telemetry on the OpenTelemetry SDK: its providers, spans, instruments and log handler.

Imported only by :func:`pycodex.otel.start` when a signal is exported. Each provider is the server's own
(never the SDK's global one), with a batch processor; a turn's end flushes the batch on one background
thread, bounded by the exporters' timeout, and :meth:`Telemetry.shutdown` flushes what is left.

What is never exported: the user's prompt (unless ``log_user_prompt = true``), tool arguments, model
input and output, and credentials: every string attribute, status text and log line passes the trace
recorder's redactor (secret-looking environment values, bearer tokens, ``sk-`` keys).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from pycodex.json_types import JsonObj, JsonValue
from pycodex.otel.exporters import EXPORT_TIMEOUT_S, log_exporter, metric_exporter, span_exporter
from pycodex.otel.settings import Exporter, OtelSettings, Signal
from pycodex.trace.redact import Redactor

__all__ = ["ApprovalSpan", "Telemetry", "TurnSpan"]

T = TypeVar("T")
_FLUSH_MS = int(EXPORT_TIMEOUT_S * 1000)
_SHUTDOWN_MS = 1000
_METRIC_INTERVAL_MS = 60_000
_PROMPT_CHARS = 4096
_SCOPE = "pycodex"
_PROPAGATOR = TraceContextTextMapPropagator()

#: The tool call this task works for (its span and name): a failed item marks it.
_TOOL: ContextVar[tuple[trace.Span, str] | None] = ContextVar("pycodex_otel_tool", default=None)


class Telemetry:
    """One server's tracer, meter and logger providers (see the module docstring)."""

    def __init__(self, settings: OtelSettings, exporters: Mapping[Signal, Exporter], *, env: Mapping[str, str],
                 version: str, active: Callable[[], object]) -> None:
        # `active`: the telemetry of the request or turn being served (pycodex.otel's context variable), so
        # the log handler sends only this server's records.
        self.settings = settings
        self.active = active
        self._redactor = Redactor.from_environment(env)
        resource = Resource.create({
            "service.name": env.get("OTEL_SERVICE_NAME") or "pycodex", "service.version": version,
            "deployment.environment.name": settings.environment, **settings.attributes,
        })
        self._flusher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="otel-flush")
        self._flush_queued = False
        self.tracer_provider = TracerProvider(resource=resource)
        if "traces" in exporters:
            self.tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter(exporters["traces"])))
        self._tracer = self.tracer_provider.get_tracer(_SCOPE, version)
        readers = [PeriodicExportingMetricReader(metric_exporter(exporters["metrics"]),
                                                 export_interval_millis=_METRIC_INTERVAL_MS)] \
            if "metrics" in exporters else []
        self.meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        meter = self.meter_provider.get_meter(_SCOPE, version)
        self._turn_duration = meter.create_histogram("pycodex.turn.duration", unit="s",
                                                     description="How long a turn took, by outcome")
        self._tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                              description="Tokens per model request, input and output")
        self._model_duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                                      description="How long a model request took")
        self._tool_calls = meter.create_counter("pycodex.tool.calls", description="Tool calls, by tool")
        self._tool_failures = meter.create_counter("pycodex.tool.failures",
                                                   description="Tool calls that failed or were declined")
        self._queue_depth = meter.create_gauge("pycodex.server.request_queue.depth", unit="{request}",
                                               description="Requests queued behind the one being dispatched")
        self.logger_provider: LoggerProvider | None = None
        self._log_handler: logging.Handler | None = None
        if "logs" in exporters:
            self.logger_provider = LoggerProvider(resource=resource)
            self.logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter(exporters["logs"])))
            self._log_handler = _RedactingHandler(self, self.logger_provider)
            logging.getLogger().addHandler(self._log_handler)

    # -- text ------------------------------------------------------------------------------------
    def redact(self, text: str) -> str:
        """``text`` with credentials removed (the trace recorder's rules)."""
        return self._redactor.text(text)

    def _fail(self, span: trace.Span, message: str) -> None:
        span.set_status(Status(StatusCode.ERROR, self.redact(message)[:1024]))

    # -- spans -----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def request_span(self, method: str, request_id: JsonValue, trace_field: JsonValue, queued: int) -> Iterator[None]:
        """One client request's span, current for the block; its parent is ``trace_field``'s traceparent."""
        self._queue_depth.set(queued)
        parent = None
        if isinstance(trace_field, dict):
            carrier = {k: v for k in ("traceparent", "tracestate") if isinstance(v := trace_field.get(k), str)}
            parent = _PROPAGATOR.extract(carrier)
        attributes = {"rpc.system": "jsonrpc", "rpc.method": method, "rpc.jsonrpc.request_id": str(request_id)}
        with self._tracer.start_as_current_span(method, context=parent, kind=SpanKind.SERVER, attributes=attributes,
                                                record_exception=False, set_status_on_exception=False) as span:
            try:
                yield
            except Exception as exc:
                self._fail(span, f"{type(exc).__name__}: {exc}")
                raise

    def turn_started(self, thread_id: str, turn_id: str, model: str, inputs: list[JsonObj]) -> TurnSpan:
        """Start a turn's span and make it current in this task."""
        attributes: dict[str, str] = {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "pycodex",
            "gen_ai.conversation.id": thread_id, "gen_ai.request.model": model,
            "pycodex.thread.id": thread_id, "pycodex.turn.id": turn_id,
        }
        if self.settings.log_user_prompt:
            texts = [str(i.get("text")) for i in inputs if i.get("type") == "text"]
            attributes["pycodex.user_prompt"] = self.redact("\n".join(texts))[:_PROMPT_CHARS]
        span = self._tracer.start_span("invoke_agent pycodex", kind=SpanKind.INTERNAL, attributes=attributes)
        token = otel_context.attach(trace.set_span_in_context(span))
        return TurnSpan(self, span, token)

    async def model_stream(self, stream: AsyncIterator[T], *, model: str, provider: str) -> AsyncIterator[T]:
        """Re-yield ``stream``'s events, the request's span open until the response completes or fails."""
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
                      "gen_ai.request.model": model}
        span = self._tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes)
        started = time.monotonic()
        observed = _ModelObserver()
        try:
            async for event in stream:
                observed.see(event)
                yield event
        except BaseException as exc:
            if isinstance(exc, Exception):
                self._fail(span, f"{type(exc).__name__}: {exc}")
                observed.finish = "error"
            elif not isinstance(exc, GeneratorExit):
                observed.finish = observed.finish or "cancelled"
            raise
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
            self._end_model_span(span, observed, model, time.monotonic() - started)

    def _end_model_span(self, span: trace.Span, seen: _ModelObserver, model: str, seconds: float) -> None:
        if seen.failure is not None:
            self._fail(span, seen.failure)
        finish = seen.finish or ("tool_calls" if seen.tool_calls else "stop")
        span.set_attribute("gen_ai.response.finish_reasons", [finish])
        if seen.response_id:
            span.set_attribute("gen_ai.response.id", seen.response_id)
        if seen.retries:
            span.set_attribute("pycodex.model.retries", seen.retries)
        metric = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        if seen.input_tokens is not None and seen.output_tokens is not None:
            span.set_attribute("gen_ai.usage.input_tokens", seen.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", seen.output_tokens)
            self._tokens.record(seen.input_tokens, {**metric, "gen_ai.token.type": "input"})
            self._tokens.record(seen.output_tokens, {**metric, "gen_ai.token.type": "output"})
        self._model_duration.record(seconds, metric)
        span.end()

    @contextlib.contextmanager
    def tool_span(self, name: str, call_id: str) -> Iterator[None]:
        """One tool call's span, current for the block (an exception out of the tool marks it failed)."""
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                      "gen_ai.tool.call.id": call_id}
        self._tool_calls.add(1, {"gen_ai.tool.name": name})
        with self._tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes,
                                                record_exception=False, set_status_on_exception=False) as span:
            token = _TOOL.set((span, name))
            try:
                yield
            except Exception as exc:
                self._fail(span, f"{type(exc).__name__}: {exc}")
                self._tool_failures.add(1, {"gen_ai.tool.name": name, "pycodex.tool.failure": "exception"})
                raise
            finally:
                _TOOL.reset(token)

    def tool_failed(self, item_type: str, status: str) -> None:
        """The current tool call produced a failed or declined item."""
        current = _TOOL.get()
        if current is None:
            return
        span, name = current
        span.set_attribute("pycodex.item.status", status)
        self._fail(span, f"{item_type} {status}")
        self._tool_failures.add(1, {"gen_ai.tool.name": name, "pycodex.tool.failure": status})

    @contextlib.contextmanager
    def approval_span(self, method: str) -> Iterator[ApprovalSpan]:
        """The wait for the user's answer to ``method``, current for the block."""
        with self._tracer.start_as_current_span(f"approval {method}", attributes={"pycodex.approval.method": method},
                                                record_exception=False, set_status_on_exception=False) as span:
            try:
                yield ApprovalSpan(span)
            except Exception as exc:  # a timeout or an error answer: no decision
                span.set_attribute("pycodex.approval.decision", "none")
                self._fail(span, f"{type(exc).__name__}: {exc}")
                raise

    @contextlib.contextmanager
    def client_span(self, name: str, attributes: Mapping[str, str]) -> Iterator[None]:
        """An outgoing call's span (exec-server, MCP), current for the block."""
        with self._tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=dict(attributes),
                                                record_exception=False, set_status_on_exception=False) as span:
            try:
                yield
            except Exception as exc:
                self._fail(span, f"{type(exc).__name__}: {exc}")
                raise

    # -- export ----------------------------------------------------------------------------------
    def turn_done(self, seconds: float, outcome: str) -> None:
        """Count a turn, then flush every signal on the flusher thread (one flush queued at a time)."""
        self._turn_duration.record(seconds, {"pycodex.turn.outcome": outcome})
        if not self._flush_queued:
            self._flush_queued = True
            self._flusher.submit(self._flush_now)

    def _flush_now(self) -> None:
        self._flush_queued = False  # a turn ending from now on queues its own flush
        self.force_flush()

    def force_flush(self, timeout_ms: int = _FLUSH_MS) -> None:
        """Export everything recorded so far (blocking, bounded by ``timeout_ms`` per signal)."""
        self.tracer_provider.force_flush(timeout_ms)
        self.meter_provider.force_flush(timeout_ms)
        if self.logger_provider is not None:
            self.logger_provider.force_flush(timeout_ms)

    def shutdown(self, timeout_ms: int = _SHUTDOWN_MS) -> None:
        """Flush what is left and stop every provider (blocking: about ``timeout_ms`` per signal at most,
        so a collector that went away delays the server's exit only that long)."""
        if self._log_handler is not None:
            logging.getLogger().removeHandler(self._log_handler)
        self._flusher.shutdown(wait=False, cancel_futures=True)
        self.force_flush(timeout_ms)
        self.tracer_provider.shutdown()  # after the flush: its exporter stops retrying at once
        self.meter_provider.shutdown(timeout_millis=timeout_ms)
        if self.logger_provider is not None:
            self.logger_provider.shutdown()


class TurnSpan:
    """A running turn's span (current in the turn's task until :meth:`end`)."""

    def __init__(self, telemetry: Telemetry, span: trace.Span, token: object) -> None:
        self._telemetry = telemetry
        self._span = span
        self._token = token
        self._started = time.monotonic()

    def end(self, outcome: str, error: JsonObj | None) -> None:
        """End the span with the turn's ``outcome`` and ``error``; count the turn and flush."""
        span = self._span
        span.set_attribute("pycodex.turn.outcome", outcome)
        if error is not None:
            self._telemetry._fail(span, str(error.get("message", "turn failed")))
        with contextlib.suppress(ValueError, RuntimeError):  # a token of another context: nothing to undo
            otel_context.detach(self._token)  # type: ignore[arg-type]
        span.end()
        self._telemetry.turn_done(time.monotonic() - self._started, outcome)


class ApprovalSpan:
    """The span of one approval wait; :meth:`decided` records the answer's decision."""

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def decided(self, answer: object) -> None:
        """Record the decision in the client's ``answer`` (``accept``, ``decline``...)."""
        decision = answer.get("decision") if isinstance(answer, dict) else None
        if isinstance(decision, dict):
            decision = next(iter(decision), None)
        self._span.set_attribute("pycodex.approval.decision", str(decision) if decision else "unknown")


class _ModelObserver:
    """What a model request's events tell its span (read by class name: pycodex cannot import the
    app-server's event types, app_server/model/events.py)."""

    def __init__(self) -> None:
        self.response_id: str | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.tool_calls = False
        self.finish: str | None = None
        self.failure: str | None = None
        self.retries = 0

    def see(self, event: object) -> None:
        kind = type(event).__name__
        if kind in ("ResponseCreated", "ResponseCompleted"):
            self.response_id = getattr(event, "response_id", None) or self.response_id
        if kind == "ResponseCompleted":
            usage = getattr(event, "usage", None)
            if usage is not None:
                self.input_tokens = int(getattr(usage, "input_tokens", 0))
                self.output_tokens = int(getattr(usage, "output_tokens", 0))
        elif kind == "OutputItemDone" and hasattr(getattr(event, "item", None), "call_id"):
            self.tool_calls = True
        elif kind == "ResponseFailed":
            self.finish = "error"
            self.failure = str(getattr(event, "message", "response failed"))
        elif kind == "ResponseRestarted":
            self.retries += 1


_SEVERITY = {logging.DEBUG: SeverityNumber.DEBUG, logging.INFO: SeverityNumber.INFO,
             logging.WARNING: SeverityNumber.WARN, logging.ERROR: SeverityNumber.ERROR,
             logging.CRITICAL: SeverityNumber.FATAL}


class _RedactingHandler(logging.Handler):
    """Sends the server's log records to the logs exporter, redacted: only those logged while serving a
    request or turn of this telemetry, each with the current span's trace and span ids (the SDK's own
    ``LoggingHandler`` is deprecated, and would send tracebacks and unredacted arguments)."""

    def __init__(self, telemetry: Telemetry, provider: LoggerProvider) -> None:
        super().__init__()
        self._telemetry = telemetry
        self._logger = provider.get_logger(_SCOPE)

    def filter(self, record: logging.LogRecord) -> bool:
        return self._telemetry.active() is self._telemetry and super().filter(record)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            body = self._telemetry.redact(record.getMessage())
        except Exception:  # a record whose arguments do not format: the logging module's own rule
            self.handleError(record)
            return
        level = max((lvl for lvl in _SEVERITY if lvl <= record.levelno), default=logging.DEBUG)
        self._logger.emit(timestamp=int(record.created * 1e9), severity_number=_SEVERITY[level],
                          severity_text=record.levelname, body=body,
                          attributes={"code.namespace": record.name, "code.lineno": record.lineno})
