"""``pycodex acp``: build the app-server, connect the ACP agent to stdio, serve until the client leaves.

stdout carries ACP only: logging goes to stderr (``configure_logging``), as for ``pycodex app-server``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping

__all__ = ["add_acp_arguments", "run_acp"]


def add_acp_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommand's options."""
    parser.add_argument("--environment", choices=("local", "editor"), default=None,
                        help="where sessions run their tools by default (config: [acp] environment)")
    parser.add_argument("--strict-config", action="store_true", help="refuse unknown config.toml keys")


def _default_environment(raw: object, flag: str | None) -> str:
    if flag is not None:
        return flag
    table = raw.get("acp") if isinstance(raw, Mapping) else None
    value = table.get("environment") if isinstance(table, Mapping) else None
    return str(value) if value in ("local", "editor") else "local"


async def _serve(config_overrides: list[str], strict: bool, environment: str | None) -> int:
    from acp import run_agent

    from acp_agent.agent import PycodexAgent
    from acp_agent.editor import EditorChoice
    from app_server.app import AppServer, StartupError, default_codex_home

    try:
        app = AppServer(codex_home=default_codex_home(), config_overrides=config_overrides, strict_config=strict)
    except StartupError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    editor = EditorChoice(_default_environment(app.config.raw, environment))
    app.environment_for_thread = editor.hub_for
    agent = PycodexAgent(app, editor)
    try:
        await run_agent(agent)
    finally:
        await editor.close()
        await agent.close()
        await app.shutdown()
    return 0


def run_acp(args: argparse.Namespace) -> int:
    """Serve ACP on stdio; the exit status."""
    try:
        return asyncio.run(_serve(list(args.config), bool(args.strict_config), args.environment))
    except KeyboardInterrupt:
        return 130
