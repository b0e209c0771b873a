"""Who may open a WebSocket: the Origin refusal and the bearer-token policies of Codex 0.169.0.

Shared by the app-server listener and the exec-server listener. A browser always sends ``Origin`` on a
WebSocket upgrade, so any request carrying one is refused: a web page must never drive a local server.
Non-browser clients are then authenticated by ``Authorization: Bearer <token>``, either a capability
token (compared by SHA-256 digest in constant time) or an HS256-signed JWT checked against a shared
secret. Secrets live in fields excluded from ``repr`` and are never logged.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import ipaddress
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a stdio server parses these flags but never needs jwt or websockets
    from jwt.types import Options
    from websockets.datastructures import Headers

__all__ = [
    "CapabilityToken",
    "SignedBearer",
    "WsAuth",
    "WsAuthConfigError",
    "add_ws_auth_arguments",
    "authorize",
    "capability_token_matches",
    "check_listener_auth",
    "has_origin",
    "header_safe_logger",
    "ws_auth_from_args",
]

DEFAULT_MAX_CLOCK_SKEW_S = 30
MIN_SIGNED_BEARER_SECRET_BYTES = 32
INVALID_HEADER = "invalid authorization header"
INVALID_JWT = "invalid websocket jwt"
_SIGNED_ONLY_FLAGS = ("ws_shared_secret_file", "ws_issuer", "ws_audience", "ws_max_clock_skew_seconds")


class WsAuthConfigError(Exception):
    """Unusable auth flags or secret files; the message is Codex's wording."""


@dataclass(frozen=True, slots=True)
class CapabilityToken:
    """``--ws-auth capability-token``: the SHA-256 of the one bearer token accepted."""

    token_sha256: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class SignedBearer:
    """``--ws-auth signed-bearer-token``: HS256 JWTs signed with ``secret``, optionally pinned to an issuer
    and audience."""

    secret: bytes = field(repr=False)
    issuer: str | None = None
    audience: str | None = None
    max_clock_skew_s: int = DEFAULT_MAX_CLOCK_SKEW_S


#: None means no authentication (acceptable on loopback only).
WsAuth = CapabilityToken | SignedBearer | None


def has_origin(headers: Headers) -> bool:
    """True for requests a browser made (they always carry ``Origin``); those are refused with 403."""
    return "Origin" in headers


def capability_token_matches(expected_sha256: bytes, token: str) -> bool:
    """True if ``token`` hashes to ``expected_sha256`` (compared in constant time)."""
    return hmac.compare_digest(hashlib.sha256(token.encode("utf-8")).digest(), expected_sha256)


def _bearer_token(headers: Headers) -> tuple[str | None, str | None]:
    """(token, None) or (None, refusal message)."""
    values = headers.get_all("Authorization")
    if not values:
        return None, "missing websocket bearer token"
    raw = values[0]
    if len(values) != 1 or not raw.isascii():
        return None, INVALID_HEADER
    scheme, sep, token = raw.partition(" ")
    if not sep or scheme.lower() != "bearer" or not token.strip():
        return None, INVALID_HEADER
    return token.strip(), None


def authorize(headers: Headers, auth: WsAuth, *, now: float | None = None) -> str | None:
    """None if the upgrade may proceed, else the 401 body Codex sends."""
    if auth is None:
        return None
    token, refusal = _bearer_token(headers)
    if token is None:
        return refusal
    if isinstance(auth, CapabilityToken):
        return None if capability_token_matches(auth.token_sha256, token) else "invalid websocket bearer token"
    return _check_jwt(token, auth, time.time() if now is None else now)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_jwt(token: str, auth: SignedBearer, now: float) -> str | None:
    import jwt

    # PyJWT checks the HS256 signature only; the claims are checked here for Codex's exact refusals.
    off: Options = {"verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_aud": False,
           "verify_iss": False, "verify_sub": False, "verify_jti": False}
    try:
        claims = jwt.decode(token, auth.secret, algorithms=["HS256"], options=off)
    except jwt.PyJWTError:
        return INVALID_JWT
    exp, nbf, iss, aud = (claims.get(k) for k in ("exp", "nbf", "iss", "aud"))
    aud_ok = aud is None or isinstance(aud, str) or (isinstance(aud, list) and all(isinstance(a, str) for a in aud))
    # Codex deserializes the claims strictly: a missing or non-integer `exp` is an invalid token.
    if not isinstance(exp, int) or isinstance(exp, bool) or (nbf is not None and not _is_int(nbf)):
        return INVALID_JWT
    if not aud_ok or not (iss is None or isinstance(iss, str)):
        return INVALID_JWT
    skew = auth.max_clock_skew_s
    if int(now) > exp + skew:
        return "expired websocket jwt"
    if nbf is not None and int(now) < nbf - skew:
        return "websocket jwt is not valid yet"
    if auth.issuer is not None and iss != auth.issuer:
        return "websocket jwt issuer mismatch"
    if auth.audience is not None and auth.audience not in ([aud] if isinstance(aud, str) else aud or []):
        return "websocket jwt audience mismatch"
    return None


def add_ws_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """The app-server's ``--ws-*`` flags, as ``codex app-server --help`` lists them."""
    parser.add_argument("--ws-auth", choices=["capability-token", "signed-bearer-token"], metavar="MODE",
                        help="authentication for incoming WebSocket connections: capability-token or "
                             "signed-bearer-token")
    parser.add_argument("--ws-token-file", metavar="PATH", help="path to the capability-token file")
    parser.add_argument("--ws-token-sha256", metavar="HEX", help="hex SHA-256 digest of the capability token")
    parser.add_argument("--ws-shared-secret-file", metavar="PATH",
                        help="path to the shared secret for HS256-signed JWT bearer tokens")
    parser.add_argument("--ws-issuer", metavar="ISSUER", help="expected `iss` of signed bearer tokens")
    parser.add_argument("--ws-audience", metavar="AUDIENCE", help="expected `aud` of signed bearer tokens")
    parser.add_argument("--ws-max-clock-skew-seconds", type=int, metavar="SECONDS",
                        help=f"clock skew allowed for `exp`/`nbf` (default {DEFAULT_MAX_CLOCK_SKEW_S})")


def _read_secret(path_arg: str) -> str:
    path = Path(path_arg).absolute()  # Codex resolves a relative path against the working directory
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise WsAuthConfigError(f"failed to read websocket auth secret {path}: {reason}") from None
    secret = raw.strip()
    if not secret:
        raise WsAuthConfigError(f"websocket auth secret {path} must not be empty")
    return secret


def _trimmed(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


def ws_auth_from_args(args: argparse.Namespace) -> WsAuth:
    """Validate the flags (Codex's rules and messages) and read the secret files."""
    mode = getattr(args, "ws_auth", None)
    token_file, token_hex = getattr(args, "ws_token_file", None), getattr(args, "ws_token_sha256", None)
    signed_flags = any(getattr(args, name, None) is not None for name in _SIGNED_ONLY_FLAGS)
    if mode is None:
        if token_file is not None or token_hex is not None or signed_flags:
            raise WsAuthConfigError(
                "websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`")
        return None
    if mode == "capability-token":
        if signed_flags:
            raise WsAuthConfigError(
                "`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and `--ws-max-clock-skew-seconds` "
                "require `--ws-auth signed-bearer-token`")
        if token_file is not None and token_hex is not None:
            raise WsAuthConfigError("`--ws-token-file` and `--ws-token-sha256` are mutually exclusive")
        if token_hex is not None:
            try:
                digest = bytes.fromhex(token_hex.strip())
            except ValueError:
                digest = b""
            if len(digest) != 32:
                raise WsAuthConfigError("--ws-token-sha256 must be a 64-character hex SHA-256 digest")
            return CapabilityToken(digest)
        if token_file is None:
            raise WsAuthConfigError(
                "`--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth capability-token` is set")
        return CapabilityToken(hashlib.sha256(_read_secret(token_file).encode("utf-8")).digest())
    if token_file is not None or token_hex is not None:
        raise WsAuthConfigError(
            "`--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, not `signed-bearer-token`")
    secret_file = getattr(args, "ws_shared_secret_file", None)
    if secret_file is None:
        raise WsAuthConfigError("`--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is set")
    secret = _read_secret(secret_file).encode("utf-8")
    if len(secret) < MIN_SIGNED_BEARER_SECRET_BYTES:
        raise WsAuthConfigError(f"signed websocket bearer secret {Path(secret_file).absolute()} must be at least "
                                f"{MIN_SIGNED_BEARER_SECRET_BYTES} bytes")
    skew = getattr(args, "ws_max_clock_skew_seconds", None)
    if skew is not None and skew < 0:
        raise WsAuthConfigError("--ws-max-clock-skew-seconds must not be negative")
    return SignedBearer(secret, issuer=_trimmed(getattr(args, "ws_issuer", None)),
                        audience=_trimmed(getattr(args, "ws_audience", None)),
                        max_clock_skew_s=DEFAULT_MAX_CLOCK_SKEW_S if skew is None else skew)


def check_listener_auth(host: str, port: int, auth: WsAuth) -> None:
    """Refuse an unauthenticated listener on anything but a loopback address (Codex's rule and text)."""
    if auth is not None or ipaddress.ip_address(host).is_loopback:
        return
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    raise WsAuthConfigError(
        f"refusing to start non-loopback websocket listener {shown} without auth; "
        "configure `--ws-auth capability-token` or `--ws-auth signed-bearer-token`")


class _NoDebugLogger(logging.LoggerAdapter):  # type: ignore[type-arg]
    """websockets' DEBUG trace prints every request header, ``Authorization`` included: keep it off."""

    def isEnabledFor(self, level: int) -> bool:
        return level > logging.DEBUG and self.logger.isEnabledFor(level)


def header_safe_logger(name: str) -> logging.LoggerAdapter:  # type: ignore[type-arg]
    """A logger for ``websockets.serve(logger=...)`` that never emits the handshake's headers."""
    return _NoDebugLogger(logging.getLogger(name), {})
