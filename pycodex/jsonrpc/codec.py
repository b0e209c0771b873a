"""Encoding and classification of single JSON-RPC messages (no framing, no IO).

The wire omits the ``"jsonrpc"`` member on output and accepts it on input. Output is compact JSON with
non-ASCII kept as UTF-8, except U+2028/U+2029, which are escaped so that no consumer that treats them as
line breaks (JavaScript line readers do) can split a message.

orjson encodes when it is installed (13x faster on a small notification than the stdlib encoder); the
stdlib encoder remains the reference and takes over for anything orjson would write differently.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import NoReturn

from pycodex.json_types import JsonObj, JsonValue

try:
    import orjson
except ImportError:  # optional: the stdlib encoder does the same job, slower
    orjson = None  # type: ignore[assignment]

__all__ = [
    "ErrorReceived",
    "Message",
    "NotificationReceived",
    "RequestReceived",
    "ResponseReceived",
    "VerbatimString",
    "Violation",
    "classify",
    "dumps",
    "encode",
]



class VerbatimString(str):
    """A string known to need no JSON escaping (e.g. base64), written as is.

    Only honoured as a direct value of ``params``. It spares the encoder a per-character scan of large
    payloads such as the exec-server's output chunks; the caller guarantees the content is safe.
    """

    __slots__ = ()


_PLACEHOLDER = "\x00verbatim{}\x00"
_PLACEHOLDER_JSON = tuple(json.dumps(_PLACEHOLDER.format(i)) for i in range(8))
_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def encode(message: JsonObj) -> bytes:
    """Serialise one message as a single line of compact JSON, without the trailing LF."""
    params = message.get("params")
    verbatim: list[str] = []
    if isinstance(params, dict):
        swapped: JsonObj | None = None
        for key, value in params.items():
            if type(value) is VerbatimString and len(verbatim) < len(_PLACEHOLDER_JSON):
                if swapped is None:
                    swapped = dict(params)
                swapped[key] = _PLACEHOLDER.format(len(verbatim))
                verbatim.append(value)
        if swapped is not None:
            message = {**message, "params": swapped}
    data = dumps(message)
    if _LS in data or _PS in data:
        # Inside JSON text these characters can only occur within strings, so escaping is lossless.
        data = data.replace(_LS, b"\\u2028").replace(_PS, b"\\u2029")
    for index, value in enumerate(verbatim):
        data = data.replace(_PLACEHOLDER_BYTES[index], b'"' + value.encode("utf-8") + b'"', 1)
    return data


_LS, _PS = "\u2028".encode(), "\u2029".encode()
_PLACEHOLDER_BYTES = tuple(text.encode() for text in _PLACEHOLDER_JSON)
#: orjson writes NaN and the infinities as null where the stdlib refuses them, and serialises dataclasses
#: and datetimes the stdlib would reject: such messages (rare) go through the stdlib encoder.
_ORJSON_OPTIONS = (orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
                   if orjson is not None else 0)


def dumps(value: object, *, finite_checked: bool = False) -> bytes:
    """Compact UTF-8 JSON, as the stdlib writes it with ``allow_nan=False`` (raises ValueError on NaN).

    ``finite_checked``: the caller knows ``value`` holds no NaN or infinity (it was parsed from strict JSON,
    say), so output containing ``null`` need not be re-encoded by the stdlib to make sure.
    """
    if orjson is not None:
        try:
            data = orjson.dumps(value, option=_ORJSON_OPTIONS)
        except TypeError:  # a big integer, deep nesting or a type only the stdlib path names: let it decide
            pass
        else:
            if finite_checked or b"null" not in data:
                return data
    return _DUMPS(value).encode("utf-8")


@dataclass(frozen=True, slots=True)
class RequestReceived:
    """A request from the remote side; it must get exactly one response."""

    id: JsonValue
    method: str
    params: JsonValue
    has_params: bool
    #: Another request with the same id is still in flight; answer with ``error_untracked``.
    duplicate: bool = False
    #: The request's W3C trace context (Codex's ``trace``: ``{"traceparent": ..., "tracestate": ...}``).
    trace: JsonValue = None


@dataclass(frozen=True, slots=True)
class NotificationReceived:
    """A notification from the remote side: it gets no answer."""

    method: str
    params: JsonValue
    has_params: bool


@dataclass(frozen=True, slots=True)
class ResponseReceived:
    """A result for one of our own requests. ``method`` is None when the id was not ours."""

    id: JsonValue
    result: JsonValue
    method: str | None


@dataclass(frozen=True, slots=True)
class ErrorReceived:
    """An error answer to one of our requests. ``method`` is None when the id was not ours."""

    id: JsonValue
    error: JsonValue
    method: str | None


@dataclass(frozen=True, slots=True)
class Violation:
    """Input that is not a JSON-RPC message. Each wire decides how to answer it."""

    reason: str
    excerpt: str


Message = RequestReceived | NotificationReceived | ResponseReceived | ErrorReceived | Violation

_EXCERPT = 120


def _excerpt(raw: bytes | str) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError("number out of range")
    return value


def classify(raw: bytes | str) -> Message:
    """Parse one message. Responses come back with ``method=None``; the peer fills it in.

    Strict JSON in UTF-8, as Codex's parser: a byte-order mark, ``NaN``/``Infinity`` and numbers beyond
    the float range are invalid (the last two could not be written back either).
    """
    try:
        # Bytes must be UTF-8 (json.loads would also take UTF-16/32 and UTF-8-encoded surrogates).
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        obj = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except (ValueError, RecursionError) as exc:
        return Violation(f"invalid JSON: {exc}", _excerpt(raw))
    if isinstance(obj, list):
        return Violation("batches are not supported", _excerpt(raw))
    if not isinstance(obj, dict):
        return Violation(f"expected a JSON object, got {type(obj).__name__}", _excerpt(raw))
    method = obj.get("method")
    if "method" in obj:
        if not isinstance(method, str):
            return Violation("`method` must be a string", _excerpt(raw))
        has_params = "params" in obj
        params = obj.get("params")
        if "id" in obj:
            return RequestReceived(obj["id"], method, params, has_params, trace=obj.get("trace"))
        return NotificationReceived(method, params, has_params)
    if "id" in obj:
        if "error" in obj:
            return ErrorReceived(obj["id"], obj["error"], None)
        if "result" in obj:
            return ResponseReceived(obj["id"], obj["result"], None)
    return Violation("object has neither a method nor a response id", _excerpt(raw))
