"""A catalog of bad inputs against a real exec-server (ours), one table row per case.

Each row pins its answer (error code and a message substring, a result, or a dropped connection).
After every case the server must still serve (a fresh connection gets ``environment/status``) and
nothing on disk may have changed: the whole tree the cases point at, including an outside sentinel
directory, is compared before and after.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import websockets

from tests.support.execserver import STEP, Raw, ServerProc, raw_client, run_ws_server, start_params, uri

READ_CAP = 32 * 1024 * 1024


@dataclass(frozen=True)
class Err:
    code: int
    text: str


@dataclass(frozen=True)
class Ok:
    result: dict[str, Any]


@dataclass(frozen=True)
class Dropped:
    """The transport refuses the message (e.g. too big) and closes this connection only."""


Setup = Callable[[Raw, Path], Awaitable[None]]


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    params: Callable[[Path], Any]
    expect: Err | Ok | Dropped
    setup: Setup | None = None


def managed(base: Path, *entries: dict[str, Any]) -> dict[str, Any]:
    return {
        "permissions": {
            "type": "managed",
            "file_system": {"type": "restricted", "entries": list(entries)},
            "network": "restricted",
        },
        "cwd": uri(base / "W"),
        "workspaceRoots": [uri(base / "W")],
        "windowsSandboxLevel": "disabled",
    }


ROOT_READ = {"path": {"type": "special", "value": {"kind": "root"}}, "access": "read"}
PROJECT_WRITE = {"path": {"type": "special", "value": {"kind": "project_roots"}}, "access": "write"}


def read_only(base: Path) -> dict[str, Any]:
    return managed(base, ROOT_READ)


def workspace_write(base: Path) -> dict[str, Any]:
    return managed(base, ROOT_READ, PROJECT_WRITE)


async def closed_process(c: Raw, base: Path) -> None:
    await c.ok("process/start", start_params("done", ["/bin/true"], base))
    await c.events_until_closed("done")


async def long_poll_pending(c: Raw, base: Path) -> None:
    await c.ok("process/start", start_params("sleeper", ["/bin/sleep", "30"], base))
    await c.send({"id": 9999, "method": "process/read", "params": {"processId": "sleeper", "waitMs": 60_000}})


NOT_A_FILE = "is not a file"
EROFS = Err(-32603, "Read-only file system (os error 30)")

CASES = [
    # -- sandbox policies of the wrong shape
    Case(
        "policy-unknown-variant",
        "fs/writeFile",
        lambda b: {"path": uri(b / "W/n"), "dataBase64": "", "sandbox": {"permissions": {"type": "weird"}}},
        Err(-32602, "unknown variant `weird`, expected one of `managed`, `disabled`, `external`"),
    ),
    Case(
        "policy-missing-permissions",
        "fs/remove",
        lambda b: {"path": uri(b / "O/keep.txt"), "sandbox": {}},
        Err(-32602, "missing field `permissions`"),
    ),
    Case(
        "policy-not-an-object",
        "fs/readFile",
        lambda b: {"path": uri(b / "O/keep.txt"), "sandbox": "x"},
        Err(-32602, 'invalid type: string "x", expected struct WireFileSystemSandboxContext'),
    ),
    Case(
        "policy-missing-windows-level",
        "fs/writeFile",
        lambda b: {
            "path": uri(b / "O/n"),
            "dataBase64": "",
            "sandbox": {"permissions": {"type": "disabled"}},
        },
        Err(-32602, "missing field `windowsSandboxLevel`"),
    ),
    Case(
        "policy-unknown-file-system-kind",
        "fs/createDirectory",
        lambda b: {
            "path": uri(b / "O/n"),
            "sandbox": {
                **read_only(b),
                "permissions": {"type": "managed", "file_system": {"type": "weird"}, "network": "restricted"},
            },
        },
        Err(-32602, "unknown variant `weird`, expected `restricted` or `unrestricted`"),
    ),
    Case(
        "policy-unknown-access",
        "fs/remove",
        lambda b: {"path": uri(b / "O/keep.txt"), "sandbox": managed(b, {**ROOT_READ, "access": "all"})},
        Err(-32602, "unknown variant `all`, expected one of `read`, `write`, `deny`, `none`"),
    ),
    Case(
        "policy-relative-entry-path",
        "fs/writeFile",
        lambda b: {
            "path": uri(b / "O/n"),
            "dataBase64": "",
            "sandbox": managed(b, {"path": {"type": "path", "path": "O"}, "access": "write"}),
        },
        Err(-32602, "invalid URI: relative URL without a base"),
    ),
    # -- paths that are not absolute file:// URIs
    Case(
        "relative-path",
        "fs/writeFile",
        lambda b: {"path": "O/n", "dataBase64": ""},
        Err(-32602, "invalid URI: relative URL without a base"),
    ),
    Case(
        "non-file-scheme",
        "fs/readFile",
        lambda b: {"path": "https://example.com/x"},
        Err(-32602, "unsupported path URI scheme `https`"),
    ),
    Case(
        "uri-with-host",
        "fs/remove",
        lambda b: {"path": "file://etc/passwd"},
        Err(-32602, "file URI with host `etc` is not a local path"),
    ),
    Case("missing-path", "fs/readFile", lambda b: {}, Err(-32602, "missing field `path`")),
    Case("path-of-wrong-type", "fs/getMetadata", lambda b: {"path": 5}, Err(-32602, "invalid type: integer")),
    Case("params-null", "fs/readFile", lambda b: None, Err(-32602, "invalid type: null, expected struct")),
    Case(
        "missing-file",
        "fs/readFile",
        lambda b: {"path": uri(b / "W/nope")},
        Err(-32004, "No such file or directory (os error 2)"),
    ),
    # -- special files and sizes
    Case(
        "read-dev-zero",
        "fs/readFile",
        lambda b: {"path": "file:///dev/zero"},
        Err(-32600, "path `/dev/zero` is not a file"),
    ),
    Case("read-fifo", "fs/readFile", lambda b: {"path": uri(b / "fifo")}, Err(-32600, NOT_A_FILE)),
    Case("read-directory", "fs/readFile", lambda b: {"path": uri(b / "W")}, Err(-32600, NOT_A_FILE)),
    Case(
        "read-over-the-cap",
        "fs/readFile",
        lambda b: {"path": uri(b / "sparse")},
        Err(-32600, f"file is too large to read: limit is {READ_CAP} bytes"),
    ),
    Case(
        "open-dev-zero",
        "fs/open",
        lambda b: {"handleId": "h", "path": "file:///dev/zero"},
        Err(-32600, NOT_A_FILE),
    ),
    Case(
        "write-into-fifo",
        "fs/writeFile",
        lambda b: {"path": uri(b / "fifo"), "dataBase64": "aGk="},
        Err(-32603, "No such device or address (os error 6)"),
    ),
    Case(
        "copy-dev-zero",
        "fs/copy",
        lambda b: {"sourcePath": "file:///dev/zero", "destinationPath": uri(b / "W/z"), "recursive": False},
        Err(-32600, "fs/copy only supports regular files, directories, and symlinks"),
    ),
    Case(
        "copy-fifo",
        "fs/copy",
        lambda b: {"sourcePath": uri(b / "fifo"), "destinationPath": uri(b / "W/z"), "recursive": False},
        Err(-32600, "fs/copy only supports regular files, directories, and symlinks"),
    ),
    Case(
        "copy-directory-into-itself",
        "fs/copy",
        lambda b: {"sourcePath": uri(b / "W"), "destinationPath": uri(b / "W/sub/again"), "recursive": True},
        Err(-32600, "fs/copy cannot copy a directory to itself or one of its descendants"),
    ),
    Case(
        "copy-directory-not-recursive",
        "fs/copy",
        lambda b: {"sourcePath": uri(b / "W"), "destinationPath": uri(b / "W2"), "recursive": False},
        Err(-32600, "fs/copy requires recursive: true when sourcePath is a directory"),
    ),
    Case(
        "write-invalid-base64",
        "fs/writeFile",
        lambda b: {"path": uri(b / "W/n"), "dataBase64": "!!!"},
        Err(-32600, "fs/writeFile requires valid base64 dataBase64"),
    ),
    Case(
        "write-over-the-frame-limit",
        "fs/writeFile",
        lambda b: {
            "path": uri(b / "W/huge"),
            "dataBase64": base64.b64encode(bytes(65 * 1024 * 1024)).decode(),
        },
        Dropped(),
    ),
    Case(
        "remove-flag-of-wrong-type",
        "fs/remove",
        lambda b: {"path": uri(b / "O/keep.txt"), "recursive": "yes"},
        Err(-32602, "invalid type: string, expected a boolean"),
    ),
    # -- the policy holds for every escape route
    Case(
        "read-only-write-outside",
        "fs/writeFile",
        lambda b: {"path": uri(b / "O/keep.txt"), "dataBase64": "", "sandbox": read_only(b)},
        EROFS,
    ),
    Case(
        "read-only-remove",
        "fs/remove",
        lambda b: {"path": uri(b / "O/keep.txt"), "recursive": True, "sandbox": read_only(b)},
        EROFS,
    ),
    Case(
        "workspace-write-symlink-escape",
        "fs/remove",
        lambda b: {"path": uri(b / "W/link_out/keep.txt"), "sandbox": workspace_write(b)},
        EROFS,
    ),
    Case(
        "workspace-write-dotdot-escape",
        "fs/writeFile",
        lambda b: {"path": uri(b / "W/../O/keep.txt"), "dataBase64": "", "sandbox": workspace_write(b)},
        EROFS,
    ),
    Case(
        "workspace-write-copy-out",
        "fs/copy",
        lambda b: {
            "sourcePath": uri(b / "W/src.txt"),
            "destinationPath": uri(b / "W/link_out/c"),
            "sandbox": workspace_write(b),
        },
        EROFS,
    ),
    Case(
        "workspace-write-git-is-read-only",
        "fs/remove",
        lambda b: {"path": uri(b / "W/.git"), "recursive": True, "sandbox": workspace_write(b)},
        EROFS,
    ),
    # -- processes
    Case(
        "read-unknown-process",
        "process/read",
        lambda b: {"processId": "nope", "waitMs": 30_000},
        Err(-32600, "unknown process id nope"),
    ),
    Case(
        "read-closed-process-answers-at-once",
        "process/read",
        lambda b: {"processId": "done", "afterSeq": 1_000, "waitMs": 30_000},
        Ok(
            {
                "chunks": [],
                "nextSeq": 3,
                "exited": True,
                "exitCode": 0,
                "closed": True,
                "failure": None,
                "sandboxDenied": False,
            }
        ),
        setup=closed_process,
    ),
    Case(
        "long-poll-does-not-stall-others",
        "environment/status",
        lambda b: {},
        Ok({"status": "ready"}),
        setup=long_poll_pending,
    ),
    Case(
        "write-invalid-base64-to-process",
        "process/write",
        lambda b: {"processId": "nope", "chunk": "!!", "writeId": "w"},
        Err(-32602, "invalid base64"),
    ),
    Case(
        "start-argv-not-a-list",
        "process/start",
        lambda b: {**start_params("p", ["x"], b), "argv": "ls"},
        Err(-32602, "expected a sequence"),
    ),
    Case(
        "start-empty-argv",
        "process/start",
        lambda b: start_params("p", [], b),
        Err(-32602, "argv must not be empty"),
    ),
    Case(
        "unknown-signal",
        "process/signal",
        lambda b: {"processId": "nope", "signal": "kill"},
        Err(-32602, "unknown variant `kill`, expected `interrupt`"),
    ),
    Case(
        "read-block-unknown-handle",
        "fs/readBlock",
        lambda b: {"handleId": "zz", "offset": 0, "len": 1},
        Err(-32004, "unknown file handle `zz`"),
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    with run_ws_server("pycodex", tmp_path_factory.mktemp("bad-exec-server")) as srv:
        yield srv


def build(base: Path) -> None:
    (base / "W" / "sub").mkdir(parents=True)
    (base / "W" / ".git").mkdir()
    (base / "W" / ".git" / "HEAD").write_text("ref: main")
    (base / "W" / "src.txt").write_text("source")
    (base / "O" / "deep").mkdir(parents=True)
    (base / "O" / "keep.txt").write_text("sentinel")
    (base / "O" / "deep" / "keep.txt").write_text("sentinel too")
    (base / "W" / "link_out").symlink_to(base / "O")
    os.mkfifo(base / "fifo")
    with open(base / "sparse", "wb") as f:
        f.truncate(READ_CAP + 1)


def snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    out: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if path.is_symlink():
                out[str(path)] = ("link", 0, os.readlink(path).encode())
            elif path.is_file():
                head = path.read_bytes()[:64] if st.st_size < 1 << 20 else b""
                out[str(path)] = ("file", st.st_size, head)
            else:
                out[str(path)] = ("other", 0, b"")
    return out


async def expect_dropped(url: str, method: str, params: Any) -> None:
    # Not through raw_client: closing a connection the peer already aborted trips websockets up.
    ws = await asyncio.wait_for(websockets.connect(url, compression=None, max_size=None), STEP)
    c = Raw(ws, url)
    await c.initialize()
    with pytest.raises(websockets.ConnectionClosed) as dropped:
        await c.call(method, params)
    assert dropped.value.rcvd is not None and dropped.value.rcvd.code == 1009  # message too big
    await asyncio.wait_for(ws.wait_closed(), STEP)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_bad_input_gets_its_pinned_answer_and_harms_nothing(
    server: ServerProc, tmp_path: Path, case: Case
) -> None:
    base = tmp_path.resolve()
    build(base)
    before = snapshot(base)
    if isinstance(case.expect, Dropped):
        await expect_dropped(server.url, case.method, case.params(base))
    else:
        async with raw_client(server.url) as c:
            await c.initialize()
            if case.setup is not None:
                await case.setup(c, base)
            got = await c.call(case.method, case.params(base))
        if isinstance(case.expect, Ok):
            assert got.get("result") == case.expect.result, got
        else:
            assert got.get("error", {}).get("code") == case.expect.code, got
            assert case.expect.text in got["error"]["message"], got
    # Still serving, on a new connection, and promptly.
    async with raw_client(server.url) as again:
        await again.initialize()
        status = await asyncio.wait_for(again.call("environment/status", {}), STEP)
        assert status["result"] == {"status": "ready"}
    assert snapshot(base) == before


def test_the_catalog_is_big_enough_and_names_are_unique() -> None:
    assert len(CASES) >= 20
    assert len({c.name for c in CASES}) == len(CASES)
