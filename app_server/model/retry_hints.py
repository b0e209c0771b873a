"""How long a server asks us to wait before retrying, from its headers or its error text.

Three forms are understood, first match wins: the `retry-after-ms` header (milliseconds, as sent by
OpenAI and Azure), `Retry-After` (delay-seconds or an HTTP-date, RFC 9110 §10.2.3) and the
"try again in 1.898s" / "28ms" / "35 seconds" text Codex reads out of rate-limit error messages.
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Mapping

_TRY_AGAIN = re.compile(r"try again in\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?)\b", re.IGNORECASE)


def _finite(value: float) -> float | None:
    return max(value, 0.0) if math.isfinite(value) else None


def parse_retry_after(value: str, now: float) -> float | None:
    """Seconds to wait for one `Retry-After` value (seconds or HTTP-date); None if unreadable."""
    value = value.strip()
    if not value:
        return None
    try:
        return _finite(float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # HTTP-dates are GMT by definition
        return None
    return max(when.timestamp() - now, 0.0)


def parse_try_again_in(text: str) -> float | None:
    """The delay in a "Please try again in 11.054s." style message."""
    match = _TRY_AGAIN.search(text)
    if match is None:
        return None
    amount = float(match.group(1))
    return _finite(amount / 1000.0 if match.group(2).lower().startswith("m") else amount)


def retry_hint(headers: Mapping[str, str], body: str, now: float) -> float | None:
    """The server's requested delay in seconds, or None when it gave none (or none we can read)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            hint = _finite(float(millis) / 1000.0)
        except ValueError:
            hint = None
        if hint is not None:
            return hint
    after = headers.get("retry-after")
    if after is not None:
        hint = parse_retry_after(after, now)
        if hint is not None:
            return hint
    return parse_try_again_in(body)
