"""Every public module, class and function of the core's protocol and transport layers has a docstring.

The JSON-RPC codec, peer, router and serde translator, the transports and the endpoint, the platform
helpers (spawn, fd reading, Landlock), signals and logging are what every server is built on; a reader
should learn what each piece is for without reading its body.
"""

from __future__ import annotations

from tests.support.docstrings import missing_docstrings

CORE = (
    "pycodex/transport",
    "pycodex/jsonrpc",
    "pycodex/platform",
    "pycodex/signals.py",
    "pycodex/logging_setup.py",
    "pycodex/log_context.py",
)


def test_the_core_protocol_and_transports_have_docstrings() -> None:
    assert missing_docstrings(*CORE) == []
