"""Give freed heap memory back to the OS once a session's output is gone.

A session that streamed hundreds of MB leaves the C heap with megabytes of free but still mapped
pages (pipe reads, encoded notifications and socket buffers came and went); glibc returns them only
from the top of the heap on its own. ``malloc_trim`` releases free pages throughout every arena, so an
expired session brings RSS back near the start-up baseline. Elsewhere (musl, macOS) this does nothing.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable

__all__ = ["release_free_heap"]

log = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # only once a session ends: start-up does not pay for it

    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim  # the C library this process runs on
    except (OSError, AttributeError):  # no glibc (musl has no malloc_trim)
        return None
    return trim


def release_free_heap() -> None:
    """Hand freed heap pages back to the OS (glibc's ``malloc_trim``); a no-op where it is missing."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
        log.debug("returned free heap pages to the OS")
