"""The page size of Codex 0.169's newer list methods (project/list, thread/timeline/list): 25 unless the
client asks, and whatever it asks clamped to 1..100 (not an error), as Codex does."""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_PAGE", "MAX_PAGE", "page_size"]

DEFAULT_PAGE: Final = 25
MAX_PAGE: Final = 100


def page_size(limit: int | None) -> int:
    """The number of entries a page holds for the client's ``limit``."""
    return min(max(DEFAULT_PAGE if limit is None else limit, 1), MAX_PAGE)
