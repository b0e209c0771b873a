"""The ``pycodex`` command line: global options, then one subcommand per product.

Subcommands import their package lazily so ``pycodex --version`` and the app-server start fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pycodex import COMPATIBLE_CODEX_VERSION, __version__

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pycodex",
        description="An open implementation of the Codex app-server stack "
        f"(wire-compatible with Codex CLI {COMPATIBLE_CODEX_VERSION}).",
    )
    parser.add_argument(
        "--version", action="version", version=f"pycodex {__version__} (codex-compatible {COMPATIBLE_CODEX_VERSION})"
    )
    parser.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="key=value",
        help="override a config.toml value (dotted key; the value is parsed as TOML, else taken as a string)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    app = sub.add_parser("app-server", help="serve the Codex v2 JSON-RPC protocol (stdio by default)")
    app.add_argument("--listen", default="stdio://", metavar="URL", help="stdio:// (default) or ws://IP:PORT")
    app.add_argument("--strict-config", action="store_true", help="treat unknown config keys as errors")
    # Codex also takes -c after the subcommand (`codex app-server -c k=v`); a separate dest keeps both.
    app.add_argument("-c", "--config", action="append", default=[], dest="app_config", metavar="key=value",
                     help="override a config.toml value (same as the top-level -c)")
    app_sub = app.add_subparsers(dest="app_command", metavar="SUBCOMMAND")
    schema = app_sub.add_parser("generate-json-schema", help="write the JSON Schema of the protocol models")
    schema.add_argument("--out", required=True, metavar="DIR")
    schema.add_argument("--experimental", action="store_true", help="include experimental fields and methods")

    from exec_server.cli import add_exec_server_arguments

    exec_server = sub.add_parser("exec-server", help="run processes and file operations for an app-server")
    add_exec_server_arguments(exec_server)

    from relay.cli import add_relay_arguments

    relay = sub.add_parser(
        "relay",
        help="development registry + rendezvous relay for remote exec-servers (not a production control plane)",
    )
    add_relay_arguments(relay)

    # Parsed by compat_tests/runner.py (see main); listed here for --help.
    sub.add_parser("compat", help="run the version-skew matrix over Codex and pycodex builds (see --help)",
                   add_help=False)

    demo = sub.add_parser("demo", help="run one offline turn on the built-in scripted model and print it")
    demo.add_argument("--json", action="store_true", help="print the raw protocol lines instead of a transcript")
    demo.add_argument("--local", action="store_true",
                      help="run the command in the app-server's own environment instead of via the relay")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["compat"]:
        from pycodex.compat_command import run_compat

        return run_compat(raw[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    from pycodex.logging_setup import configure_logging

    configure_logging()
    if args.command == "app-server":
        if args.app_command == "generate-json-schema":
            from app_server.protocol.schema_export import write_json_schema

            write_json_schema(Path(args.out), experimental=args.experimental)
            return 0
        from app_server.main import run_app_server

        return run_app_server(listen=args.listen, config_overrides=[*args.config, *args.app_config],
                              strict_config=args.strict_config)
    if args.command == "exec-server":
        import asyncio

        from exec_server.cli import run_exec_server

        return asyncio.run(run_exec_server(args))
    if args.command == "relay":
        import asyncio

        from relay.cli import run_relay

        return asyncio.run(run_relay(args))
    if args.command == "demo":
        from pycodex.demo import run_demo

        return run_demo(config_overrides=args.config, raw=args.json, local=args.local)
    parser.print_help(sys.stderr)
    return 2
