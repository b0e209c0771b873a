"""``pycodex trace export --otlp URL FILE``: a recorded session (a turn with an approved command run on an
executor through the relay, then a plain turn) reaches a local collector as one span tree, without the
trace's prompts, command lines or credentials; a collector that is not there is an error, not a silence."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.otel.otlp_receiver import Receiver, Span, otlp_receiver
from tests.support.remote import TOKEN
from tests.support.tools import require_grpc
from tests.support.trace_session import API_KEY, OUTPUT, recorded_session


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("trace-export")

    async def record() -> Path:
        async with recorded_session(tmp) as recorded:
            return recorded.trace

    return asyncio.run(record())


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as running:
        yield running


def export(trace: Path, url: str, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pycodex", "trace", "export", "--otlp", url, str(trace),
                           "--header", "x-collector-token=collector-secret", *more],
                          capture_output=True, text=True, timeout=60, check=False)


def _children(spans: list[Span], parent: Span, prefix: str) -> list[Span]:
    return [s for s in spans if s.parent_id == parent.span_id and s.name.startswith(prefix)]


def test_a_recorded_trace_becomes_one_span_tree(trace: Path, receiver: Receiver) -> None:
    done = export(trace, receiver.url)
    assert done.returncode == 0, done.stderr
    assert receiver.paths == ["/v1/traces"]  # one request, sent to the base URL's traces path
    spans = receiver.named("")
    assert f"exported {len(spans)} spans" in done.stdout
    (root,) = [s for s in spans if s.parent_id == ""]
    assert root.name == f"pycodex trace {trace.name}" and root.trace_id in done.stdout
    assert {s.trace_id for s in spans} == {root.trace_id}
    starts = _children(spans, root, "turn/start")
    assert len(starts) == 2
    turns = [turn for start in starts for turn in _children(spans, start, "invoke_agent pycodex")]
    assert len(turns) == 2  # each turn under the turn/start that began it
    first = min(turns, key=lambda s: len(_children(spans, s, "")))
    busy = max(turns, key=lambda s: len(_children(spans, s, "")))
    assert [s.attributes["gen_ai.response.finish_reasons"] for s in _children(spans, first, "chat ")] == [["stop"]]
    chats = _children(spans, busy, "chat mock-model")
    assert sorted(s.attributes["gen_ai.response.finish_reasons"][0] for s in chats) == ["stop", "tool_calls"]
    (tool,) = _children(spans, busy, "execute_tool commandExecution")
    assert tool.attributes["pycodex.item.status"] == "completed"
    (approval,) = _children(spans, busy, "approval")
    assert approval.attributes["pycodex.approval.decision"] == "accept"
    assert _children(spans, busy, "exec process/start")


def test_the_export_holds_no_prompt_command_or_credential(trace: Path, receiver: Receiver) -> None:
    assert export(trace, receiver.url).returncode == 0
    exported = b"".join(receiver.bodies)
    for canary in (API_KEY, TOKEN, OUTPUT, "run it", "collector-secret"):
        assert canary.encode() not in exported, canary


def test_a_collector_that_is_not_there_fails_the_export(trace: Path) -> None:
    done = export(trace, "http://127.0.0.1:9/v1/traces", "--timeout", "0.5")  # a closed port: refused, retried
    assert done.returncode == 1
    assert "did not take the spans within 0.5 s" in done.stderr


def test_the_export_goes_over_grpc_too(trace: Path) -> None:
    require_grpc()
    from concurrent.futures import ThreadPoolExecutor

    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    received: list[trace_service_pb2.ExportTraceServiceRequest] = []

    class Collector(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            received.append(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Collector(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        done = export(trace, f"http://127.0.0.1:{port}", "--protocol", "grpc")
    finally:
        server.stop(grace=None)
    assert done.returncode == 0, done.stderr
    names = {span.name for request in received for rs in request.resource_spans for ss in rs.scope_spans
             for span in ss.spans}
    assert {"turn/start", "invoke_agent pycodex", "execute_tool commandExecution"} <= names
