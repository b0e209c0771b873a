"""The ``pycodex`` command line: global options, then one subcommand per product.

Subcommands import their package lazily: a product's argument builder lives next to its server code, so the
parser only fills in the subcommand being run. ``pycodex --version`` and ``pycodex --help`` import no server
code (tests/pycodex/test_cli_imports.py keeps it that way).

``pycodex app-server proxy`` is handed over before anything else: clients spawn it for every connection,
so this module imports nothing at the top but ``sys`` and the version numbers (tests/pycodex/test_cli_imports.py
pins what a proxy loads).
"""

from __future__ import annotations

import sys

from pycodex import COMPATIBLE_CODEX_VERSION, __version__

TYPE_CHECKING = False  # not `typing`'s: importing typing costs the proxy more than its own module (mypy reads both alike)
if TYPE_CHECKING:  # argparse is imported by build_parser: a bare `pycodex app-server` parses nothing
    import argparse
    from collections.abc import Callable, Collection, Sequence

__all__ = ["build_parser", "main"]

VERSION_LINE = f"pycodex {__version__} (codex-compatible {COMPATIBLE_CODEX_VERSION})"
# Global options that take a value: their value is never the subcommand name.
_VALUED_GLOBALS = frozenset({"-c", "--config"})


def _add_app_server_arguments(app: argparse.ArgumentParser) -> None:
    app.add_argument("--listen", default="stdio://", metavar="URL", help="stdio:// (default), unix://, unix://PATH, ws://IP:PORT or off")
    app.add_argument("--strict-config", action="store_true", help="treat unknown config keys as errors")
    app.add_argument("--stdio", action="store_const", const="stdio://", dest="listen",
                     help="use stdio as the transport (equivalent to `--listen stdio://`)")
    app.add_argument("--trace", metavar="FILE", default=None,
                     help="record every protocol message to FILE as JSON lines (also $PYCODEX_TRACE)")
    from pycodex.transport.ws_auth import add_ws_auth_arguments

    add_ws_auth_arguments(app)
    # Codex also takes -c after the subcommand (`codex app-server -c k=v`); a separate dest keeps both.
    app.add_argument("-c", "--config", action="append", default=[], dest="app_config", metavar="key=value",
                     help="override a config.toml value (same as the top-level -c)")
    app_sub = app.add_subparsers(dest="app_command", metavar="SUBCOMMAND")
    schema = app_sub.add_parser("generate-json-schema", help="write the JSON Schema of the protocol models")
    schema.add_argument("--out", required=True, metavar="DIR")
    schema.add_argument("--experimental", action="store_true", help="include experimental fields and methods")
    # Parsed by app_server.daemon.cli and .proxy (main() hands them over before argparse); listed for --help.
    app_sub.add_parser("daemon", help="manage the local app-server daemon: start, stop, restart, status, version")
    app_sub.add_parser("proxy", help="proxy stdio bytes to the running app-server control socket [--sock PATH]")
    ts = app_sub.add_parser("generate-ts", help="write TypeScript types of the protocol (from the JSON Schema)")
    ts.add_argument("--out", required=True, metavar="DIR")
    ts.add_argument("--experimental", action="store_true", help="include experimental fields and methods")


def _add_exec_server_arguments(parser: argparse.ArgumentParser) -> None:
    from exec_server.cli import add_exec_server_arguments

    add_exec_server_arguments(parser)


def _add_relay_arguments(parser: argparse.ArgumentParser) -> None:
    from relay.cli import add_relay_arguments

    add_relay_arguments(parser)


def _add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    from pycodex.trace.cli import add_trace_arguments

    add_trace_arguments(parser)


def _add_demo_arguments(demo: argparse.ArgumentParser) -> None:
    demo.add_argument("--json", action="store_true", help="print the raw protocol lines instead of a transcript")
    demo.add_argument("--local", action="store_true",
                      help="run the command in the app-server's own environment instead of via the relay")


def _add_threads_arguments(parser: argparse.ArgumentParser) -> None:
    from pycodex.debug.threads import add_threads_arguments

    add_threads_arguments(parser)


def _add_config_arguments(parser: argparse.ArgumentParser) -> None:
    from pycodex.debug.config_show import add_config_arguments

    add_config_arguments(parser)


def _add_mcp_arguments(parser: argparse.ArgumentParser) -> None:
    from pycodex.mcp_cli.manage import add_mcp_arguments

    add_mcp_arguments(parser)


def _add_mcp_server_arguments(parser: argparse.ArgumentParser) -> None:
    from pycodex.mcp_cli.server import add_mcp_server_arguments

    add_mcp_server_arguments(parser)


def _add_acp_arguments(parser: argparse.ArgumentParser) -> None:
    from acp_agent.main import add_acp_arguments

    add_acp_arguments(parser)


def _add_mock_model_arguments(parser: argparse.ArgumentParser) -> None:
    from app_server.model.mock_server import add_mock_model_arguments

    add_mock_model_arguments(parser)


# name -> (one-line help, function adding the subcommand's arguments), in `--help` order.
SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "app-server": ("serve the Codex v2 JSON-RPC protocol (stdio by default)", _add_app_server_arguments),
    "exec-server": ("run processes and file operations for an app-server", _add_exec_server_arguments),
    "relay": (
        "development registry + rendezvous relay for remote exec-servers (not a production control plane)",
        _add_relay_arguments,
    ),
    # Parsed by pycodex.exec_cli (its PROMPT and resume/fork subcommands share a position); listed for --help.
    "exec": (
        "run one non-interactive turn and print it (`--json`: JSONL events), like `codex exec`",
        lambda _parser: None,
    ),
    # Parsed by compat_tests/runner.py (see main); listed for --help.
    "compat": ("run the version-skew matrix over Codex and pycodex builds (see --help)", lambda _parser: None),
    "demo": ("run one offline turn on the built-in scripted model and print it", _add_demo_arguments),
    "threads": ("stored threads: list, show ID, export ID [--format md|json]", _add_threads_arguments),
    "doctor": ("check config, model provider, sandbox, Codex binary and exec-server/relay", lambda _parser: None),
    "config": ("`config show [--origin]`: the effective config and where each value came from",
               _add_config_arguments),
    "mock-model": ("serve a scripted fake Responses API for offline tests (--script FILE --listen IP:PORT)",
                   _add_mock_model_arguments),
    "mcp": ("manage `[mcp_servers.NAME]` in config.toml: list, get, add, remove (like `codex mcp`)",
            _add_mcp_arguments),
    "mcp-server": ("serve pycodex sessions as MCP tools `codex` and `codex-reply` over stdio",
                   _add_mcp_server_arguments),
    "acp": ("serve the Agent Client Protocol on stdio (Zed, JetBrains, Neovim...); see docs/acp.md",
            _add_acp_arguments),
    "trace": ("read a protocol trace (app-server --trace): show, html, replay, export", _add_trace_arguments),
}


def chosen_subcommand(argv: Sequence[str]) -> str | None:
    """The subcommand named in `argv` (the first bare word that is not a global option's value), if any."""
    tokens = iter(argv)
    for token in tokens:
        if token in _VALUED_GLOBALS:
            next(tokens, None)
        elif token == "--":
            return None
        elif not token.startswith("-"):
            return token if token in SUBCOMMANDS else None
    return None


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The full parser; with `commands`, only those subcommands get their arguments (and their imports)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="pycodex",
        description="An open implementation of the Codex app-server stack "
        f"(wire-compatible with Codex CLI {COMPATIBLE_CODEX_VERSION}).",
    )
    parser.add_argument("--version", action="version", version=VERSION_LINE)
    parser.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="key=value",
        help="override a config.toml value (dotted key; the value is parsed as TOML, else taken as a string)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_arguments) in SUBCOMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        if commands is None or name in commands:
            add_arguments(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The ``pycodex`` command: its exit status (130, without a traceback, for a Ctrl-C during start-up)."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:2] == ["app-server", "proxy"]:
        # Spawned per connection: the proxy module is the whole proxy, with its own SIGUSR1, CODEX_HOME and
        # Ctrl-C handling (what _main sets up costs more than the proxy itself).
        from app_server.daemon.proxy import run_proxy

        return run_proxy(arguments[2:])
    from pycodex.signals import quiet_interrupt

    return quiet_interrupt(lambda: _main(arguments))


def _main(arguments: list[str]) -> int:
    from pycodex.lean_imports import skip_httpx_cli
    from pycodex.signals import survive_usr1

    survive_usr1()  # first: a SIGUSR1 during start-up must not end the process
    skip_httpx_cli()
    if arguments == ["--version"]:  # what argparse's version action prints, without building the parser
        print(VERSION_LINE)
        return 0
    problem = _codex_home_problem(arguments)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    if arguments == ["app-server"]:
        # What clients spawn: no flags to parse, so neither the parser nor the flags' modules are paid for
        # before the server answers initialize (tests/app_server/test_app_server_startup_imports.py).
        from app_server.main import run_app_server

        return run_app_server(listen="stdio://")
    if arguments[:2] == ["app-server", "daemon"]:  # parsed by hand: no parser, no logging set-up
        from app_server.daemon.cli import run_daemon_command

        return run_daemon_command(arguments[2:])
    if arguments[:1] == ["compat"]:
        from pycodex.compat_command import run_compat

        return run_compat(arguments[1:])
    from pycodex.exec_cli.args import split_root_args

    exec_argv = split_root_args(arguments)
    if exec_argv is not None:
        from pycodex.logging_setup import configure_logging

        configure_logging()
        from pycodex.exec_cli.run import run_exec

        return run_exec(exec_argv)
    chosen = chosen_subcommand(arguments)
    parser = build_parser(commands=() if chosen is None else (chosen,))
    # `mcp add NAME [OPTIONS] -- COMMAND...`: argparse cannot place options between two positionals, so the
    # words after `--` are split off here and handed over as `mcp_trailing`.
    trailing: list[str] = []
    if chosen == "mcp" and "--" in arguments:
        cut = arguments.index("--")
        arguments, trailing = arguments[:cut], arguments[cut + 1:]
    args = parser.parse_args(arguments)
    args.mcp_trailing = trailing
    from pycodex.logging_setup import configure_logging

    configure_logging()
    if args.command == "app-server":
        from pathlib import Path

        if args.app_command == "generate-json-schema":
            from app_server.protocol.schema_export import write_json_schema

            write_json_schema(Path(args.out), experimental=args.experimental)
            return 0
        if args.app_command == "generate-ts":
            from app_server.protocol.typescript_export import write_typescript

            write_typescript(Path(args.out), experimental=args.experimental)
            return 0
        from app_server.main import run_app_server

        return run_app_server(listen=args.listen, config_overrides=[*args.config, *args.app_config],
                              strict_config=args.strict_config, ws_auth_args=args, trace=args.trace)
    if args.command == "exec-server":
        import asyncio

        from exec_server.cli import run_exec_server

        return asyncio.run(run_exec_server(args))
    if args.command == "relay":
        import asyncio

        from relay.cli import run_relay

        return asyncio.run(run_relay(args))
    if args.command == "trace":
        from pycodex.trace.cli import run_trace

        return run_trace(args)
    if args.command == "acp":
        from acp_agent.main import run_acp

        return run_acp(args)
    if args.command == "demo":
        from pycodex.demo import run_demo

        return run_demo(config_overrides=args.config, raw=args.json, local=args.local)
    return _run_debug_command(args) if args.command in _DEBUG_COMMANDS else _usage(parser)


#: The commands that read CODEX_HOME: a set CODEX_HOME that is not a folder stops them, as it stops Codex.
_HOME_COMMANDS = frozenset({"acp", "app-server", "exec", "mcp", "mcp-server", "threads", "config", "doctor"})


def _codex_home_problem(arguments: Sequence[str]) -> str | None:
    """Codex's one-line refusal of a CODEX_HOME that names no folder, for a command that reads it; else None."""
    from pycodex.codex_home import HOME_ERROR_PREFIX, codex_home_problem

    command = chosen_subcommand(arguments)
    if command is None:  # `pycodex e ...` (the alias) and exec options placed before the word
        from pycodex.exec_cli.args import split_root_args

        command = "exec" if split_root_args(arguments) is not None else None
    if command not in _HOME_COMMANDS or "-h" in arguments or "--help" in arguments:
        return None
    problem = codex_home_problem()
    if problem is None:
        return None
    return f"Error: {problem}" if command == "app-server" else HOME_ERROR_PREFIX + problem


_DEBUG_COMMANDS = frozenset({"threads", "doctor", "config", "mock-model", "mcp", "mcp-server"})


def _run_debug_command(args: argparse.Namespace) -> int:
    if args.command == "threads":
        from pycodex.debug.threads import run_threads

        return run_threads(args)
    if args.command == "doctor":
        from pycodex.debug.doctor import run_doctor

        return run_doctor(args.config)
    if args.command == "config":
        from pycodex.debug.config_show import run_config

        return run_config(args, args.config)
    if args.command == "mcp":
        from app_server.app import default_codex_home
        from pycodex.mcp_cli.manage import run_mcp

        return run_mcp(args, default_codex_home())
    if args.command == "mcp-server":
        from pycodex.mcp_cli.server import run_mcp_server

        return run_mcp_server(args)
    from app_server.model.mock_server import run_mock_model

    return run_mock_model(args)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2
