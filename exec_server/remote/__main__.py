"""``python -m exec_server.remote --remote URL --environment-id ID``: remote mode without the CLI wiring."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from exec_server.remote.cli import add_remote_arguments, run_remote_executor
from exec_server.remote.session_bridge import connection_session_factory
from exec_server.session import Limits, SessionRegistry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exec_server.remote")
    add_remote_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    async def run() -> int:
        registry = SessionRegistry(Limits())
        try:
            return await run_remote_executor(args, connection_session_factory(registry))
        finally:
            await registry.shutdown()

    return asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main())
