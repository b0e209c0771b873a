"""The stored login: ``CODEX_HOME/auth.json`` as Codex 0.169 writes it for an API key,
``{"auth_mode": "apikey", "OPENAI_API_KEY": ...}``, readable by the owner only.

Codex uses (and ``account/read`` reports) the stored key only for providers that require OpenAI auth (the
built-in ``openai`` provider, or one with ``requires_openai_auth = true``); there it wins over any
environment variable. The file is read on every use, so a login or logout applies to the next request."""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["AUTH_FILE", "remove_login", "store_api_key", "stored_api_key"]

AUTH_FILE = "auth.json"


def stored_api_key(codex_home: Path) -> str | None:
    """The API key of an API-key login, or None (no file, another login mode, an unreadable file)."""
    try:
        data = json.loads((codex_home / AUTH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or str(data.get("auth_mode", "apikey")).lower() != "apikey":
        return None
    key = data.get("OPENAI_API_KEY")
    return key if isinstance(key, str) and key else None


def store_api_key(codex_home: Path, api_key: str) -> None:
    """Write the login atomically with mode 0600. Raises OSError."""
    path = codex_home / AUTH_FILE
    tmp = path.with_name(f".{AUTH_FILE}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": api_key}, indent=2))
    os.replace(tmp, path)


def remove_login(codex_home: Path) -> None:
    """Forget the stored login. Raises OSError."""
    (codex_home / AUTH_FILE).unlink(missing_ok=True)
