"""The search's pre-filter: one regex scan over a listing's joined paths finds exactly the paths a
search path by path would (no match across paths, one hit per path, lower-casing as per path)."""

from __future__ import annotations

import pytest

from app_server.search.fuzzy import SEPARATOR, RootListing, search_listings, to_path_end
from app_server.search.score import subsequence_pattern

PATHS = [
    "src", "src/main.py", "src/ma/in/main.rs", "mAIN", "a/m", "b/ain", "ΑΣ", "ΑΣ/σ.txt", "weird\nname/main",
    "x.y/[ab]*.c", "m", "ai", "n",
]


def listing(paths: list[str]) -> RootListing:
    """A listing of ``paths`` (every one a file), built as ``list_root`` builds it."""
    lowered = SEPARATOR.join(path.lower() for path in paths)
    return RootListing("/root", paths, [False] * len(paths), lowered)


@pytest.mark.parametrize("query", ["main", "m", "ma", "σ", "Σ.TXT", "[ab]*", "e\nn", "min", "zz"])
def test_the_joined_scan_finds_what_a_scan_per_path_finds(query: str) -> None:
    pattern = subsequence_pattern(query, SEPARATOR)
    expected = [i for i, path in enumerate(PATHS) if pattern.search(path.lower())]
    assert list(listing(PATHS).candidates(to_path_end(pattern))) == expected


def test_a_query_that_spans_two_paths_finds_neither() -> None:
    # "m" ends one path and "ain" is the next: joined, only the separator keeps them apart.
    assert search_listings("main", [listing(["a/m", "ain"])]) == []
    assert search_listings("m" + SEPARATOR + "a", [listing(["a/m", "ain"])]) == []
