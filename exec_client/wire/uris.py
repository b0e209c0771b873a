"""``file://`` URIs, the only path form on the exec-server wire, with Codex's error texts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import quote, unquote, urlsplit

from pydantic import AfterValidator

__all__ = ["FileUri", "InvalidUri", "path_to_uri", "uri_to_path"]


class InvalidUri(ValueError):
    """A path on the wire that is not an absolute ``file://`` URI (Codex: -32602 ``invalid URI``)."""


def uri_to_path(uri: str) -> Path:
    """``file:///a/b`` → ``/a/b``; Codex's messages are reproduced for the common failures."""
    parts = urlsplit(uri)
    if not parts.scheme:
        raise InvalidUri("invalid URI: relative URL without a base")
    if parts.scheme != "file":
        raise InvalidUri(f"unsupported path URI scheme `{parts.scheme}`")
    if parts.netloc not in ("", "localhost"):
        # ``file://etc/passwd`` names host ``etc``; dropping the host would silently mean ``/passwd``.
        raise InvalidUri(f"invalid URI: file URI with host `{parts.netloc}` is not a local path")
    path = unquote(parts.path) or "/"
    if not path.startswith("/"):
        raise InvalidUri("invalid URI: relative URL without a base")
    return Path(path)


def path_to_uri(path: str | Path) -> str:
    """The ``file://`` URI of ``path``, percent-encoded as Codex writes it."""
    return "file://" + quote(str(path), safe="/:@!$&'()*+,;=-._~")


def _check_file_uri(value: str) -> str:
    uri_to_path(value)
    return value


#: A ``file://`` URI; anything else fails validation with Codex's ``invalid URI: ...`` text.
FileUri = Annotated[str, AfterValidator(_check_file_uri)]
