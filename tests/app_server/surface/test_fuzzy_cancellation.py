"""fuzzyFileSearch `cancellationToken`: a later search with the same token cancels a running one, which answers
with no files (Codex 0.169's answer); the later one answers normally, and the connection keeps serving while a
search runs. The first search is held inside its walk by a FIFO `.gitignore`, which the walker blocks on until
the test opens and closes the FIFO's other end, so the order is certain without any sleep."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from app_server.search.fuzzy import FuzzySessions, fuzzy_file_search
from tests.support.hermetic import below_a_repository_root

SERVERS = [pytest.param("codex", marks=pytest.mark.codex), "pycodex"]


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """The test's folder, one below a repository root: the walk for ignore rules stops there and reads no
    `.gitignore` above the temp folder (tests/support/hermetic.py)."""
    return below_a_repository_root(tmp_path)


def test_cancelled_search_finds_nothing(tmp_path: Path) -> None:
    (tmp_path / "alpha.txt").touch()
    assert fuzzy_file_search("alpha", [str(tmp_path)])
    assert fuzzy_file_search("alpha", [str(tmp_path)], cancelled=lambda: True) == []
    sessions = FuzzySessions()
    first = sessions.begin_search("t")
    second = sessions.begin_search("t")
    assert first.is_set() and not second.is_set()
    sessions.end_search("t", first)  # the older search ending leaves the token to the newer one...
    sessions.begin_search("t")
    assert second.is_set()  # ...so a third search still cancels the second


@pytest.mark.parametrize("server", SERVERS)
async def test_same_token_cancels_the_running_search(
    server: str, request: pytest.FixtureRequest, app_server: Any, codex_home: Path, tmp_path: Path
) -> None:
    argv = [str(request.getfixturevalue("codex_bin")), "app-server"] if server == "codex" else None
    slow, fast = tmp_path / "slow", tmp_path / "fast"
    for root in (slow, fast):
        root.mkdir()
        (root / "alpha.txt").touch()
    fifo = slow / ".gitignore"
    os.mkfifo(fifo)
    client = await app_server(argv=argv, codex_home=codex_home)
    params = {"query": "alpha", "cancellationToken": "t"}
    await client.send({"id": "first", "method": "fuzzyFileSearch", "params": dict(params, roots=[str(slow)])})
    # Opening the FIFO for writing returns once the server's walker has opened it for reading.
    opening = asyncio.ensure_future(asyncio.to_thread(os.open, fifo, os.O_WRONLY))
    try:
        writer = await asyncio.wait_for(asyncio.shield(opening), 30)
    except TimeoutError:  # release the blocked thread before failing
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        os.close(await opening)
        raise
    try:
        second = await client.request("fuzzyFileSearch", dict(params, roots=[str(fast)]), timeout=30)
        assert [f["path"] for f in second["result"]["files"]] == ["alpha.txt"]
    finally:
        os.close(writer)  # the walker reads an empty file and goes on
    first = await client.wait_response("first", timeout=30)
    assert first == {"id": "first", "result": {"files": []}}
    with contextlib.suppress(FileNotFoundError):
        fifo.unlink()
