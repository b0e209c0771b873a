"""``fs/walk``, block I/O on handles and ``fs/watchMissing``, pinned to Codex 0.169.0."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.execserver import STEP, ServerProc, raw_client, run_ws_server, server_params, uri


@pytest.fixture(params=server_params())
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProc]:
    with run_ws_server(request.param, tmp_path) as srv:
        yield srv


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "d").mkdir()
    (root / "f1").write_text("1")
    (root / "a" / "f2").write_text("2")
    (root / "a" / "b" / "f3").write_text("3")
    (root / "d" / "f4").write_text("hello\n")
    (root / "a" / "linkd").symlink_to(root / "d")
    return root


def _opts(depth: int, dirs: int = 100, entries: int = 100, follow: bool = False) -> dict[str, object]:
    return {
        "maxDepth": depth,
        "maxDirectories": dirs,
        "maxEntries": entries,
        "followDirectorySymlinks": follow,
    }


async def test_walk_is_breadth_first_sorted_and_bounded(server: ServerProc, tree: Path) -> None:
    async with raw_client(server.url) as c:
        await c.initialize()

        async def walk(**kw: object) -> tuple[list[tuple[str, str]], bool]:
            got = await c.ok("fs/walk", {"path": uri(tree), "options": _opts(**kw)})  # type: ignore[arg-type]
            assert got["errors"] == []
            rel = [(e["path"].removeprefix(uri(tree) + "/"), e["kind"]) for e in got["entries"]]
            return rel, got["truncated"]

        top = [("a", "directory"), ("d", "directory"), ("f1", "file")]
        assert await walk(depth=0) == (top, False)
        second = [("a/b", "directory"), ("a/f2", "file"), ("d/f4", "file")]
        third = [("a/b/c", "directory"), ("a/b/f3", "file")]
        assert await walk(depth=1) == (top + second, False)
        assert await walk(depth=5) == (top + second + third, False)
        # Followed, the link is listed as a directory; its target was already walked as `d`.
        followed = [("a/b", "directory"), ("a/f2", "file"), ("a/linkd", "directory"), ("d/f4", "file")]
        assert await walk(depth=5, follow=True) == (top + followed + third, False)
        assert await walk(depth=5, dirs=1) == (top, True)
        assert await walk(depth=5, entries=3) == (top, True)
        missing = await c.call("fs/walk", {"path": uri(tree / "nope"), "options": _opts(5)})
        assert missing["error"] == {"code": -32004, "message": "No such file or directory (os error 2)"}
        on_file = await c.ok("fs/walk", {"path": uri(tree / "f1"), "options": _opts(5)})
        assert on_file == {"entries": [], "errors": [], "truncated": False}


async def test_file_handles_read_and_replace_in_blocks(server: ServerProc, tree: Path) -> None:
    async with raw_client(server.url) as c:
        await c.initialize()
        f4 = uri(tree / "d" / "f4")
        assert await c.ok("fs/open", {"handleId": "h1", "path": f4}) == {"handleId": "h1"}
        dup = await c.call("fs/open", {"handleId": "h1", "path": f4})
        assert dup["error"] == {"code": -32600, "message": "file handle `h1` already exists"}
        assert await c.ok("fs/readBlock", {"handleId": "h1", "offset": 0, "len": 3}) == {
            "chunk": "aGVs",
            "eof": False,
        }
        assert await c.ok("fs/readBlock", {"handleId": "h1", "offset": 6, "len": 3}) == {
            "chunk": "",
            "eof": True,
        }
        bad = await c.call("fs/writeBlock", {"handleId": "h1", "offset": 0, "chunk": "eA=="})
        assert bad["error"] == {"code": -32603, "message": "Bad file descriptor (os error 9)"}
        unknown = await c.call("fs/readBlock", {"handleId": "nope", "offset": 0, "len": 3})
        assert unknown["error"] == {"code": -32004, "message": "unknown file handle `nope`"}
        assert await c.ok("fs/close", {"handleId": "h1"}) == {}
        assert await c.ok("fs/close", {"handleId": "h1"}) == {}
        new = uri(tree / "new.bin")
        await c.ok("fs/open", {"handleId": "h3", "path": new, "mode": "replace"})
        assert await c.ok("fs/writeBlock", {"handleId": "h3", "offset": 2, "chunk": "eHk="}) == {}
        await c.ok("fs/close", {"handleId": "h3"})
        assert (tree / "new.bin").read_bytes() == b"\0\0xy"
        directory = await c.call("fs/open", {"handleId": "h4", "path": uri(tree / "a")})
        assert directory["error"] == {"code": -32600, "message": f"path `{tree / 'a'}` is not a file"}
        missing = await c.call("fs/open", {"handleId": "h5", "path": uri(tree / "nope")})
        assert missing["error"]["code"] == -32004
        mode = await c.call("fs/open", {"handleId": "h6", "path": f4, "mode": "bogus"})
        assert mode["error"] == {
            "code": -32602,
            "message": "unknown variant `bogus`, expected `read` or `replace`",
        }


async def test_watch_missing_fires_once_when_the_path_appears(server: ServerProc, tree: Path) -> None:
    async with raw_client(server.url) as c:
        await c.initialize()
        later = tree / "later.txt"
        got = await c.ok("fs/watchMissing", {"watchId": 3, "missing": [uri(later)], "present": None})
        assert got == {"watching": True}
        later.write_text("x")
        note = await c.recv(STEP)
        assert note == {"method": "fs/missingChanged", "params": {"watchId": 3}}
        present = await c.ok(
            "fs/watchMissing", {"watchId": 4, "missing": [uri(tree / "f1")], "present": None}
        )
        assert present == {"watching": False}
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(c.ws.recv(), 0.8)
