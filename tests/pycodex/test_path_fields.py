"""A NUL byte in a request's path field is refused with -32602 naming the field (Codex accepts it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app_server.handlers import register_all
from app_server.router import Router
from exec_server.router import ExecRouter
from pycodex.jsonrpc.errors import InvalidParams
from pycodex.jsonrpc.path_fields import first_nul_path, is_path_key


class _NoServices:
    """Registration touches no service."""


def test_path_keys() -> None:
    assert all(map(is_path_key, ("cwd", "path", "writableRoots", "extraLogFiles", "source_dir", "codexHome")))
    assert not any(map(is_path_key, ("profile", "text", "command", "pathology", "rootless")))


def test_the_first_nul_path_is_named_at_any_depth() -> None:
    assert first_nul_path({"cwd": "/tmp", "text": "a\x00b"}) is None  # message text may hold NUL
    assert first_nul_path({"cwd": "/tmp\x00/x"}) == "cwd"
    policy = {"sandboxPolicy": {"type": "workspaceWrite", "writableRoots": ["/ok", "/bad\x00"]}}
    assert first_nul_path(policy) == "sandboxPolicy.writableRoots"
    assert first_nul_path({"items": [{"path": "a"}, {"path": "\x00"}]}) == "items[1].path"


def test_app_server_thread_start_refuses_a_nul_cwd() -> None:
    router = Router()
    register_all(router, _NoServices())  # type: ignore[arg-type]
    route = router.route("thread/start")
    assert route is not None
    with pytest.raises(InvalidParams) as caught:
        router.parse(route, {"cwd": "/tmp\x00/etc"}, True)
    assert caught.value.message == "Invalid request: invalid value for `cwd`: a path may not contain a NUL byte"


def test_exec_server_fs_read_refuses_a_nul_path() -> None:
    router = ExecRouter()
    route = router.route("fs/readFile")
    assert route is not None
    with pytest.raises(InvalidParams, match=r"^invalid value for `path`: a path may not contain a NUL byte$"):
        router.parse(route, {"path": "file:///etc/passwd\x00.txt"}, True)


async def test_over_the_wire(app_server: Any, workspace: Path) -> None:
    client = await app_server()
    answer = await client.request("thread/start", {"cwd": f"{workspace}\x00/elsewhere"})
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == "Invalid request: invalid value for `cwd`: a path may not contain a NUL byte"
