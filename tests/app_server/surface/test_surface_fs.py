"""fs/* on the app-server: files, directories, metadata, copy/remove semantics and fs/watch."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from pathlib import Path

from tests.support.appserver import AppServerClient

Start = Callable[..., Awaitable[AppServerClient]]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_write_read_metadata_and_listing(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    tmp_path = tmp_path / "files"
    tmp_path.mkdir()
    target = tmp_path / "a.bin"
    assert await client.call("fs/writeFile", {"path": str(target), "dataBase64": b64(b"\x00hi")}) == {}
    assert target.read_bytes() == b"\x00hi"
    assert await client.call("fs/readFile", {"path": str(target)}) == {"dataBase64": b64(b"\x00hi")}
    meta = await client.call("fs/getMetadata", {"path": str(target)})
    assert (meta["isFile"], meta["isDirectory"], meta["isSymlink"]) == (True, False, False)
    assert meta["modifiedAtMs"] == int(target.stat().st_mtime * 1000)
    (tmp_path / "link").symlink_to(target)
    assert (await client.call("fs/getMetadata", {"path": str(tmp_path / "link")}))["isSymlink"] is True
    assert await client.call("fs/createDirectory", {"path": str(tmp_path / "d/e/f")}) == {}
    assert (tmp_path / "d/e/f").is_dir()
    listing = await client.call("fs/readDirectory", {"path": str(tmp_path)})
    assert listing["entries"] == [
        {"fileName": "a.bin", "isDirectory": False, "isFile": True},
        {"fileName": "d", "isDirectory": True, "isFile": False},
        {"fileName": "link", "isDirectory": False, "isFile": True},
    ]


async def test_errors_match_codex(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    missing = await client.request("fs/readFile", {"path": str(tmp_path / "nope")})
    assert missing["error"] == {"code": -32603, "data": {"appErrorCode": "internal_error"},
                                "message": "No such file or directory (os error 2)"}
    relative = await client.request("fs/readFile", {"path": "rel.txt"})
    assert relative["error"]["code"] == -32600
    assert "AbsolutePathBuf deserialized without a base path" in relative["error"]["message"]
    directory = await client.request("fs/readFile", {"path": str(tmp_path)})
    assert directory["error"]["message"] == f"path `{tmp_path}` is not a file"
    bad = await client.request("fs/writeFile", {"path": str(tmp_path / "x"), "dataBase64": "!!"})
    assert bad["error"]["code"] == -32600 and not (tmp_path / "x").exists()
    flat = await client.request("fs/createDirectory", {"path": str(tmp_path / "p/q"), "recursive": False})
    assert flat["error"]["code"] == -32603 and not (tmp_path / "p").exists()


async def test_copy_and_remove(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub/f.txt").write_text("x")
    refused = await client.request("fs/copy", {"sourcePath": str(src), "destinationPath": str(tmp_path / "dst")})
    assert refused["error"] == {
        "code": -32600, "data": {"appErrorCode": "invalid_request"},
        "message": "fs/copy requires recursive: true when sourcePath is a directory"}
    await client.call("fs/copy", {"sourcePath": str(src), "destinationPath": str(tmp_path / "dst"), "recursive": True})
    assert (tmp_path / "dst/sub/f.txt").read_text() == "x"
    await client.call("fs/copy", {"sourcePath": str(src / "sub/f.txt"), "destinationPath": str(tmp_path / "g")})
    assert (tmp_path / "g").read_text() == "x"
    assert await client.call("fs/remove", {"path": str(tmp_path / "nope")}) == {}  # force defaults to true
    strict = await client.request("fs/remove", {"path": str(tmp_path / "nope"), "force": False})
    assert strict["error"]["message"] == "No such file or directory (os error 2)"
    await client.call("fs/remove", {"path": str(tmp_path / "dst")})
    assert not (tmp_path / "dst").exists()
    shallow = await client.request("fs/remove", {"path": str(src), "recursive": False})
    assert "error" in shallow and (src / "sub/f.txt").exists()


async def test_watch_reports_changes_until_unwatched(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    watched = tmp_path / "w"
    watched.mkdir()
    assert await client.call("fs/watch", {"path": str(watched), "watchId": "w1"}) == {"path": str(watched)}
    again = await client.request("fs/watch", {"path": str(watched), "watchId": "w1"})
    assert again["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "watchId already exists: w1"}
    # A path that does not exist yet is accepted, as Codex accepts it.
    assert await client.call("fs/watch", {"path": str(tmp_path / "later"), "watchId": "w2"}) == {
        "path": str(tmp_path / "later")}
    target = watched / "new.txt"
    # The watcher starts right after the response: write until the first change is reported (bounded).
    for attempt in range(20):
        target.write_text(str(attempt))
        try:
            note = await client.wait_notification("fs/changed", timeout=0.5)
            break
        except TimeoutError:
            continue
    else:
        raise AssertionError("no fs/changed notification")
    assert note["params"]["watchId"] == "w1" and str(target) in note["params"]["changedPaths"]
    assert await client.call("fs/unwatch", {"watchId": "w1"}) == {}
    assert await client.call("fs/unwatch", {"watchId": "w1"}) == {}  # unknown ids are fine
    # The id is free again once unwatched.
    assert await client.call("fs/watch", {"path": str(watched), "watchId": "w1"}) == {"path": str(watched)}
