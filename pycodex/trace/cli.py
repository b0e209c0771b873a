"""``pycodex trace show|html|replay|export``: argument parsing and the one-line errors."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pycodex.json_types import JsonObj

__all__ = ["add_trace_arguments", "run_trace"]


def add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``show``, ``html``, ``replay`` and ``export`` subcommands to the ``pycodex trace`` parser."""
    sub = parser.add_subparsers(dest="trace_command", metavar="SUBCOMMAND", required=True)
    show = sub.add_parser("show", help="print the trace as a coloured timeline")
    show.add_argument("file", type=Path, metavar="FILE")
    show.add_argument("--json", action="store_true", help="print the same timeline as JSON")
    page = sub.add_parser("html", help="write the trace as one self-contained HTML page")
    page.add_argument("file", type=Path, metavar="FILE")
    page.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.html")
    replay = sub.add_parser("replay", help="replay the client side against a build; print the first divergence")
    replay.add_argument("file", type=Path, metavar="FILE")
    replay.add_argument("--server", default="current", metavar="SPEC",
                        help="current (default), codex@VERSION, pycodex@REF or path:/abs/bin")
    replay.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="how long to wait for each expected server message (default 30)")
    export = sub.add_parser("export", help="send the trace to an OpenTelemetry collector as spans")
    export.add_argument("file", type=Path, metavar="FILE")
    export.add_argument("--otlp", required=True, metavar="URL",
                        help="the collector: http://HOST:4318 (OTLP/HTTP; /v1/traces is added) or a full traces URL")
    export.add_argument("--protocol", choices=("http/protobuf", "grpc"), default="http/protobuf",
                        help="OTLP over HTTP with protobuf (default) or over gRPC")
    export.add_argument("--header", action="append", default=[], metavar="NAME=VALUE",
                        help="a header for the collector (repeatable), e.g. an authorization token")
    export.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                        help="give up when the collector has not taken the spans by then, retries included (default 10)")


def run_trace(args: argparse.Namespace) -> int:
    """Run one ``pycodex trace`` subcommand; the exit status (2 for an unreadable trace or output)."""
    from pycodex.trace.timeline import TraceReadError, build_timeline, read_trace

    try:
        events = read_trace(args.file)
    except TraceReadError as exc:
        print(f"pycodex trace: {exc}", file=sys.stderr)
        return 2
    if args.trace_command == "export":
        return _export(args, events)
    if args.trace_command == "replay":
        from pycodex.trace.replay import ReplayError, replay

        try:
            divergence = replay(events, args.server, timeout=args.timeout)
        except ReplayError as exc:
            print(f"pycodex trace replay: {exc}", file=sys.stderr)
            return 2
        print(divergence or "no divergence")
        return 1 if divergence else 0
    timeline = build_timeline(events)
    if args.trace_command == "html":
        from pycodex.trace.html import render_page

        try:
            args.output.write_text(render_page(timeline, args.file.name), encoding="utf-8")
        except OSError as exc:
            print(f"pycodex trace html: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        return 0
    if args.json:
        print(json.dumps(timeline, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console

    from pycodex.trace.show import render

    render(timeline, Console())
    return 0


def _export(args: argparse.Namespace, events: list[JsonObj]) -> int:
    """``pycodex trace export --otlp URL FILE``: 0 once the collector took the spans, 1 if it did not, 2 when
    the OpenTelemetry SDK is missing or a header is malformed."""
    from pycodex.trace.timeline import build_timeline

    headers: dict[str, str] = {}
    for header in args.header:
        name, sep, value = header.partition("=")
        if not sep or not name.strip():
            print(f"pycodex trace export: --header {header!r} is not NAME=VALUE", file=sys.stderr)
            return 2
        headers[name.strip()] = value.strip()
    try:
        from pycodex.otel import export
    except ImportError as exc:
        print(f"pycodex trace export: needs the OpenTelemetry SDK: pip install 'pycodex-stack[otel]' ({exc})",
              file=sys.stderr)
        return 2
    exporter = export.Exporter(endpoint=export.traces_endpoint(args.otlp, args.protocol), protocol=args.protocol,
                               headers=headers)
    try:
        sent, trace_id = export.export_timeline(build_timeline(events), name=args.file.name,
                                                ended_at=args.file.stat().st_mtime, exporter=exporter,
                                                environ=os.environ, timeout=args.timeout)
    except (RuntimeError, OSError) as exc:
        print(f"pycodex trace export: {exc}", file=sys.stderr)
        return 1
    print(f"exported {sent} spans to {exporter.endpoint} (trace {trace_id})")
    return 0
