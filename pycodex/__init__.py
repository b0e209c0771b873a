"""pycodex: an open implementation of the Codex app-server stack.

The package root owns the version numbers and, in subpackages, the pieces every other package shares:
the sans-IO JSON-RPC core (:mod:`pycodex.jsonrpc`) and its asyncio transports (:mod:`pycodex.transport`).
"""

__all__ = ["COMPATIBLE_CODEX_VERSION", "__version__"]

__version__ = "0.2.0"

#: The Codex CLI release whose wire protocol pycodex speaks. SDKs parse the version out of the
#: ``userAgent`` and gate features on it, so we report this one rather than our own.
COMPATIBLE_CODEX_VERSION = "0.169.0"
