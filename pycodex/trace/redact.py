"""What a trace never holds: credentials. Applied by the writer thread to every event before it is written.

Three nets, widest last: values under secret-looking keys (``authorization``, ``api-key``, ``*token*``,
``*secret*``, ``*key*``, ``*password*``, ``cookie``), bearer credentials and ``sk-`` keys inside any
string, and the literal values of this process's secret-looking environment variables (the relay auth token,
``CODEX_API_KEY``...) wherever they occur, since a command line or an error text can echo one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from pycodex.json_types import JsonValue

__all__ = ["REDACTED", "Redactor"]

REDACTED = "[REDACTED]"
_SECRET_KEY = re.compile(r"token|secret|key|password|passwd|authorization|cookie|credential", re.IGNORECASE)
# Keys matching the pattern that hold no secret (the *name* of a key's variable, a sort key).
_HARMLESS_KEYS = frozenset({"sortkey", "keys", "keyboard", "env_key", "env_key_instructions"})
_INLINE = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{4,}|\bsk-[A-Za-z0-9_-]{8,}")
_MIN_SECRET_LEN = 6
_KEY_WORDS = tuple(_SECRET_KEY.pattern.split("|"))
_SECRET_MEMBER = re.compile(r'"[^"\\]*(?:' + _SECRET_KEY.pattern + r')[^"\\]*"\s*:\s*"')


def _inline_sub(match: re.Match[str]) -> str:
    scheme = match.group(1)
    return f"{scheme} {REDACTED}" if scheme else REDACTED


class Redactor:
    """Redacts JSON-like values; ``secrets`` are literal strings removed wherever they appear."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret containing another is removed whole.
        self._secrets = sorted({s for s in secrets if len(s) >= _MIN_SECRET_LEN}, key=len, reverse=True)

    def may_hold_secrets(self, raw: str) -> bool:
        """False only when ``raw`` certainly holds nothing this redactor would change.

        Substring tests (C speed) on the lower-cased text decide whether a message needs the slow
        parse-and-walk; a case-insensitive regex alternation here cost more than the rest of the trace."""
        if any(s in raw for s in self._secrets) or "\\u" in raw:  # escapes could spell a key name
            return True
        lower = raw.lower()
        if ("bearer" in lower or "sk-" in lower) and _INLINE.search(raw):
            return True
        # Only a secret-looking key with a string value is redacted ("totalTokens": 15 is not).
        return any(word in lower for word in _KEY_WORDS) and _SECRET_MEMBER.search(lower) is not None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Redactor:
        """A redactor knowing the values of secret-looking variables in ``environ`` (default: os.environ)."""
        env = os.environ if environ is None else environ
        return cls(value for name, value in env.items() if _SECRET_KEY.search(name))

    def assignment(self, text: str) -> str:
        """A ``key=value`` override with the value redacted when the key looks secret."""
        key, sep, _ = text.partition("=")
        last = key.rsplit(".", 1)[-1].strip()
        if sep and last.lower() not in _HARMLESS_KEYS and _SECRET_KEY.search(last):
            return f"{key}={REDACTED}"
        return self.text(text)

    def value(self, obj: JsonValue) -> JsonValue:
        """``obj`` (any JSON value) with secrets redacted in its strings and under secret-looking keys."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {key: self._member(key, val) for key, val in obj.items()}
        if isinstance(obj, list):
            return [self.value(item) for item in obj]
        return obj

    def text(self, text: str) -> str:
        """``text`` with known secret values and inline bearer tokens or API keys redacted."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _INLINE.sub(_inline_sub, text) if ("earer" in text or "EARER" in text or "sk-" in text) else text

    def _member(self, key: object, val: JsonValue) -> JsonValue:
        secret_key = isinstance(key, str) and key.lower() not in _HARMLESS_KEYS and _SECRET_KEY.search(key)
        # Numbers under such keys are counts (input_tokens), not credentials.
        if secret_key and isinstance(val, str) and val:
            return REDACTED
        return self.value(val)
