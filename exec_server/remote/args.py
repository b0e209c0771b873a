"""The remote-mode options of the exec-server (``--remote URL`` and friends), apart from what runs them.

Every exec-server's parser has these options; only ``--remote`` needs the registry client, Noise and
httpx, which ``exec_server.remote.cli`` imports. So a local exec-server parses its arguments from here.
"""

from __future__ import annotations

import argparse

__all__ = ["API_KEY_ENV_VAR", "add_remote_arguments"]

API_KEY_ENV_VAR = "CODEX_API_KEY"


def add_remote_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the remote-environment options (registry URL, transport, environment id and name, bearer) to
    ``parser``."""
    group = parser.add_argument_group("remote environment (Noise relay)")
    group.add_argument(
        "--remote", default=None, metavar="URL", help="register as a remote environment with this registry"
    )
    group.add_argument(
        "--remote-transport",
        choices=["noise", "direct"],
        default="noise",
        help="transport of the remote connection (only noise is supported)",
    )
    group.add_argument("--environment-id", default=None, metavar="ID", help="environment id to register")
    group.add_argument("--name", default=None, metavar="NAME", help="human-readable environment name")
    group.add_argument(
        "--registration-bearer-stdin",
        action="store_true",
        help=f"read the registry bearer token as one line from stdin (default: ${API_KEY_ENV_VAR})",
    )
