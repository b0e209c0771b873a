"""The exec client's hot path: ``process/output`` notifications parsed without the general JSON-RPC codec.

A command's output arrives as one ``process/output`` per 8 KiB (about 12,000 per 100 MB, each with an
11 KB base64 string). The general path (``pycodex.jsonrpc.codec.classify``: the stdlib parser with its
strictness hooks, then the message classes) cost about 25 us each, a fifth of the remote client's CPU;
orjson parses one in about 4 us.

``output_params`` answers only when the answer is certainly the one the general path would reach: the
message is a notification (no ``id``) whose ``method`` is ``process/output`` and whose ``params`` is an
object with an integer ``seq``. Anything else, including every message orjson refuses, is None, and the
caller takes the general path, so a malformed or unusual message gets exactly the reference treatment.
The one value orjson reads differently, an integer beyond 64 bits (a float there, an int in the stdlib),
can only matter in ``seq``; a float ``seq`` is therefore sent the general way too.
"""

from __future__ import annotations

from pycodex.json_types import JsonObj

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; without it every message takes the general path
    orjson = None  # type: ignore[assignment]

__all__ = ["output_params"]

_METHOD = "process/output"
#: Executors write ``method`` first (Codex's serde order, ours too); where it is not near the start the
#: message is left to the general path rather than parsed twice.
_MARK = b'"process/output"'
_MARK_WITHIN = 64


def output_params(raw: bytes) -> JsonObj | None:
    """The ``params`` of a ``process/output`` notification, or None: use the general JSON-RPC path."""
    if orjson is None or raw.find(_MARK, 0, _MARK_WITHIN) < 0:
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict or obj.get("method") != _METHOD or "id" in obj:
        return None
    params = obj.get("params")
    if type(params) is not dict or type(params.get("seq")) is not int:
        return None
    return params
