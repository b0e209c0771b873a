"""The ``sandbox`` policy of the ``fs/*`` methods (defect D1): the pure decision module, the path
resolution in front of it, and the matrix over a real loopback exec-server (ours, and Codex's where
marked ``codex``, which must give the same answers).

Policies: read-only, workspace-write, danger-full-access, plus a workspace-only-read and an explicit
deny. Targets: inside the workspace, outside it, through a symlink ``W/link_out -> O``, through
``W/../O`` and through a symlinked parent directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from exec_client.wire.fs_paths import entry_path, real_path
from exec_client.wire.fs_policy import Denial, FsPolicy, Need, PolicyDenied, compile_policy
from exec_client.wire.protocol import FsPathParams, FsWriteFileParams
from exec_client.wire.sandbox_context import WireFileSystemSandboxContext
from pycodex.jsonrpc.errors import InvalidParams
from pycodex.jsonrpc.serde import Framing, validate
from tests.support.execserver import ServerProc, raw_client, run_ws_server, server_params, uri

EROFS = (-32603, "Read-only file system (os error 30)")
ENOENT = (-32004, "No such file or directory (os error 2)")
EACCES = (-32600, "Permission denied (os error 13)")


# -- policy shapes (what Codex's app-server sends) ------------------------------------------------
def special(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": "special", "value": {"kind": kind, **extra}}


def entry(path: dict[str, Any], access: str) -> dict[str, Any]:
    return {"path": path, "access": access}


def managed(workspace: str, *entries: dict[str, Any]) -> dict[str, Any]:
    return {
        "permissions": {
            "type": "managed",
            "file_system": {"type": "restricted", "entries": list(entries)},
            "network": "restricted",
        },
        "cwd": uri(workspace),
        "workspaceRoots": [uri(workspace)],
        "windowsSandboxLevel": "disabled",
        "windowsSandboxProxySettingsMode": "reconcile",
        "useLegacyLandlock": False,
    }


def policy_shape(name: str, workspace: str, outside: str) -> dict[str, Any]:
    root_read = entry(special("root"), "read")
    if name == "read-only":
        return managed(workspace, root_read)
    if name == "workspace-write":
        return managed(workspace, root_read, entry(special("project_roots"), "write"))
    if name == "workspace-only-read":
        return managed(workspace, entry(special("project_roots"), "read"))
    if name == "deny-outside":
        return managed(
            workspace, entry(special("root"), "write"), entry({"type": "path", "path": uri(outside)}, "none")
        )
    assert name == "danger-full-access"
    return {"permissions": {"type": "disabled"}, "cwd": uri(workspace), "windowsSandboxLevel": "disabled"}


def context(shape: dict[str, Any]) -> WireFileSystemSandboxContext:
    return WireFileSystemSandboxContext.model_validate(shape)


def compiled(shape: dict[str, Any], resolve: Callable[[str], str] = lambda p: p) -> FsPolicy:
    return compile_policy(context(shape), resolve=resolve, tmpdir=None, cwd="/srv")


def denial(policy: FsPolicy, path: str, need: Need) -> Denial | None:
    try:
        policy.check(path, need)
    except PolicyDenied as exc:
        return exc.denial
    return None


# -- the pure module --------------------------------------------------------------------------------
WS, OUT = "/work/ws", "/work/out"


@pytest.mark.parametrize(
    ("policy", "path", "need", "expected"),
    [
        ("read-only", f"{WS}/a.txt", Need.READ, None),
        ("read-only", f"{WS}/a.txt", Need.WRITE, Denial.READ_ONLY),
        ("read-only", f"{OUT}/a.txt", Need.WRITE, Denial.READ_ONLY),
        ("workspace-write", f"{WS}/a.txt", Need.WRITE, None),
        ("workspace-write", WS, Need.WRITE, None),
        ("workspace-write", f"{WS}/deep/er/a.txt", Need.WRITE, None),
        ("workspace-write", f"{OUT}/a.txt", Need.WRITE, Denial.READ_ONLY),
        ("workspace-write", f"{OUT}/a.txt", Need.READ, None),
        ("workspace-write", "/work/wsx/a.txt", Need.WRITE, Denial.READ_ONLY),  # a prefix is not a parent
        ("workspace-write", f"{WS}/.git/config", Need.WRITE, Denial.READ_ONLY),
        ("workspace-write", f"{WS}/.codex", Need.WRITE, Denial.READ_ONLY),
        ("workspace-write", f"{WS}/.agents/x", Need.WRITE, Denial.READ_ONLY),
        ("workspace-write", f"{WS}/sub/.git/config", Need.WRITE, None),  # only directly beneath a root
        ("workspace-write", "relative/a.txt", Need.READ, Denial.DENIED),
        ("workspace-only-read", f"{WS}/a.txt", Need.READ, None),
        ("workspace-only-read", f"{WS}/a.txt", Need.WRITE, Denial.READ_ONLY),
        ("workspace-only-read", f"{OUT}/a.txt", Need.READ, Denial.HIDDEN),
        ("workspace-only-read", "/", Need.READ, Denial.HIDDEN),
        ("deny-outside", f"{OUT}/a.txt", Need.READ, Denial.DENIED),
        ("deny-outside", OUT, Need.WRITE, Denial.DENIED),
        ("deny-outside", f"{WS}/a.txt", Need.WRITE, None),
        ("danger-full-access", f"{OUT}/a.txt", Need.WRITE, None),
        ("danger-full-access", "/etc/passwd", Need.WRITE, None),
    ],
)
def test_policy_decides_on_resolved_paths(
    policy: str, path: str, need: Need, expected: Denial | None
) -> None:
    assert denial(compiled(policy_shape(policy, WS, OUT)), path, need) is expected


def test_equally_specific_entries_prefer_deny_then_write() -> None:
    out = {"type": "path", "path": uri(OUT)}
    both = compiled(managed(WS, entry(out, "read"), entry(out, "write")))
    assert denial(both, f"{OUT}/x", Need.WRITE) is None
    denied = compiled(managed(WS, entry(out, "write"), entry(out, "deny")))
    assert denial(denied, f"{OUT}/x", Need.READ) is Denial.DENIED
    # A more specific entry wins over a broader one, whatever its access.
    narrower = compiled(
        managed(
            WS, entry(special("root"), "write"), entry({"type": "path", "path": uri(f"{OUT}/ro")}, "read")
        )
    )
    assert denial(narrower, f"{OUT}/ro/x", Need.WRITE) is Denial.READ_ONLY
    assert denial(narrower, f"{OUT}/rw", Need.WRITE) is None


def test_special_paths_resolve_against_the_context() -> None:
    shape = managed(
        WS,
        entry(special("project_roots", subpath="src"), "write"),
        entry(special("current_working_directory"), "read"),
        entry(special("slash_tmp"), "write"),
        entry(special("tmpdir"), "write"),
        entry(special("minimal"), "read"),
        entry(special("unknown", path=":future"), "write"),
    )
    policy = compiled(shape)
    assert denial(policy, f"{WS}/src/a.py", Need.WRITE) is None
    assert denial(policy, f"{WS}/README", Need.WRITE) is Denial.READ_ONLY  # cwd is only readable
    assert denial(policy, "/tmp/x", Need.WRITE) is None
    assert denial(policy, "/usr/bin/env", Need.READ) is None
    assert denial(policy, "/home/someone", Need.READ) is Denial.HIDDEN  # tmpdir unset, unknown grants nothing
    no_cwd = {**shape, "cwd": None}
    assert (
        denial(
            compile_policy(context(no_cwd), resolve=str, tmpdir="/scratch", cwd="/srv"), "/srv/a", Need.READ
        )
        is None
    )
    assert (
        denial(
            compile_policy(context(no_cwd), resolve=str, tmpdir="/scratch", cwd="/srv"),
            "/scratch/a",
            Need.WRITE,
        )
        is None
    )


def test_roots_are_resolved_so_a_symlinked_workspace_still_matches() -> None:
    policy = compiled(
        policy_shape("workspace-write", "/link/ws", OUT), resolve=lambda p: p.replace("/link/", "/real/")
    )
    assert denial(policy, "/real/ws/a", Need.WRITE) is None
    assert denial(policy, "/real/ws/.git/x", Need.WRITE) is Denial.READ_ONLY


def test_tree_checks_see_narrower_rules_and_deny_globs() -> None:
    policy = compiled(policy_shape("workspace-write", WS, OUT))
    policy.check_tree(f"{WS}/sub", Need.WRITE)
    with pytest.raises(PolicyDenied) as info:
        policy.check_tree(WS, Need.WRITE)  # W/.git is beneath it and read-only
    assert info.value.denial is Denial.READ_ONLY
    globbed = compiled(
        managed(
            WS, entry(special("root"), "write"), entry({"type": "glob_pattern", "pattern": "*.env"}, "deny")
        )
    )
    assert denial(globbed, f"{WS}/prod.env", Need.READ) is Denial.DENIED
    assert denial(globbed, f"{WS}/prod.txt", Need.WRITE) is None
    with pytest.raises(PolicyDenied):
        globbed.check_tree(WS, Need.READ)


def test_no_sandbox_and_unrestricted_kinds_allow_everything() -> None:
    assert compile_policy(None, resolve=str, tmpdir=None, cwd="/").rules is None
    for perms in (
        {"type": "disabled"},
        {"type": "external", "network": "enabled"},
        {"type": "managed", "file_system": {"type": "unrestricted"}, "network": "restricted"},
    ):
        shape = {"permissions": perms, "windowsSandboxLevel": "disabled"}
        assert denial(compiled(shape), "/etc/shadow", Need.WRITE) is None


# -- strict validation, with Codex's serde texts ---------------------------------------------------------
@pytest.mark.parametrize(
    ("sandbox", "message"),
    [
        (
            {"permissions": {"type": "weird"}},
            "unknown variant `weird`, expected one of `managed`, `disabled`, `external`",
        ),
        ({}, "missing field `permissions`"),
        ("x", 'invalid type: string "x", expected struct WireFileSystemSandboxContext'),
        (5, "invalid type: number, expected struct WireFileSystemSandboxContext"),
        ({"permissions": {"type": "disabled"}}, "missing field `windowsSandboxLevel`"),
        (
            {"permissions": "disabled", "windowsSandboxLevel": "disabled"},
            'invalid type: string "disabled", expected internally tagged enum ExecPermissionProfile',
        ),
        (
            {"permissions": {"type": "managed"}, "windowsSandboxLevel": "disabled"},
            "missing field `file_system`",
        ),
        ({"permissions": {"type": "external"}, "windowsSandboxLevel": "disabled"}, "missing field `network`"),
        (
            {"permissions": {"type": "disabled"}, "windowsSandboxLevel": "bogus"},
            "unknown variant `bogus`, expected one of `disabled`, `restricted-token`, `elevated`, `mxc`",
        ),
        (
            {
                "permissions": {"type": "managed", "file_system": {"type": "weird"}, "network": "restricted"},
                "windowsSandboxLevel": "disabled",
            },
            "unknown variant `weird`, expected `restricted` or `unrestricted`",
        ),
        (
            {
                "permissions": {
                    "type": "managed",
                    "file_system": {"type": "restricted"},
                    "network": "restricted",
                },
                "windowsSandboxLevel": "disabled",
            },
            "missing field `entries`",
        ),
        (
            {
                "permissions": {
                    "type": "managed",
                    "file_system": {"type": "restricted", "entries": 5},
                    "network": "restricted",
                },
                "windowsSandboxLevel": "disabled",
            },
            "invalid type: integer `5`, expected a sequence",
        ),
        (
            managed(WS, entry(special("root"), "bogus")),
            "unknown variant `bogus`, expected one of `read`, `write`, `deny`, `none`",
        ),
        (
            managed(WS, entry(special("foo"), "read")),
            "unknown variant `foo`, expected one of `root`, `minimal`, `current_working_directory`, `project_roots`, `tmpdir`, `slash_tmp`, `unknown`",
        ),
        (
            managed(WS, entry({"type": "glob", "value": "x"}, "read")),
            "unknown variant `glob`, expected one of `path`, `glob_pattern`, `special`",
        ),
        (managed(WS, entry({"type": "path", "value": OUT}, "write")), "missing field `path`"),
        (
            managed(WS, entry({"type": "path", "path": "relative/dir"}, "write")),
            "invalid URI: relative URL without a base",
        ),
        ({**managed(WS), "workspaceRoots": ["/not/a/uri"]}, "invalid URI: relative URL without a base"),
        (
            {
                "permissions": {"type": "disabled"},
                "windowsSandboxLevel": "disabled",
                "useLegacyLandlock": "x",
            },
            'invalid type: string "x", expected a boolean',
        ),
    ],
)
def test_a_policy_of_the_wrong_shape_is_refused_like_codex(sandbox: Any, message: str) -> None:
    with pytest.raises(InvalidParams) as info:
        _parse(FsPathParams, {"path": uri(f"{WS}/a"), "sandbox": sandbox})
    assert info.value.message == message


def test_unknown_keys_are_ignored_as_serde_does() -> None:
    params: BaseModel = _parse(
        FsWriteFileParams,
        {
            "path": uri(f"{WS}/a"),
            "dataBase64": "",
            "sandbox": {**policy_shape("read-only", WS, OUT), "future": 1},
        },
    )
    assert isinstance(params, FsWriteFileParams) and params.sandbox is not None


# -- resolution in front of the policy ---------------------------------------------------------------
@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    workspace, outside = tmp_path / "W", tmp_path / "O"
    (workspace / "sub").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret")
    (workspace / "link_out").symlink_to(outside)
    (workspace / "sub" / "linkdir").symlink_to(outside / "deep")
    return workspace, outside


def test_resolution_follows_symlinks_and_dotdot(tree: tuple[Path, Path]) -> None:
    workspace, outside = tree
    real_out = os.path.realpath(outside)
    assert real_path(workspace / "link_out" / "new.txt") == f"{real_out}/new.txt"
    assert real_path(workspace / ".." / "O" / "new.txt") == f"{real_out}/new.txt"
    assert real_path(workspace / "sub" / "linkdir" / "x" / "y") == f"{real_out}/deep/x/y"
    # lstat semantics: the link itself, not its target
    assert entry_path(workspace / "link_out") == os.path.join(os.path.realpath(workspace), "link_out")
    assert entry_path(workspace / "link_out" / "..") == os.path.realpath(workspace.parent)
    policy = compile_policy(
        context(policy_shape("workspace-write", str(workspace), str(outside))),
        resolve=os.path.realpath,
        tmpdir=None,
        cwd="/",
    )
    assert denial(policy, real_path(workspace / "link_out" / "x"), Need.WRITE) is Denial.READ_ONLY
    assert denial(policy, entry_path(workspace / "link_out"), Need.WRITE) is None


# -- over a real exec-server ------------------------------------------------------------------------------
@pytest.fixture(scope="module", params=server_params())
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    with run_ws_server(request.param, tmp_path_factory.mktemp("server")) as srv:
        yield srv


def snapshot(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "->" + os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_text()
            else:
                out[rel] = "dir"
    return out


TARGETS: dict[str, Callable[[Path], Path]] = {
    "inside": lambda base: base / "W" / "t",
    "outside": lambda base: base / "O" / "t",
    "symlink": lambda base: base / "W" / "link_out" / "t",
    "dotdot": lambda base: base / "W" / ".." / "O" / "t",
    "symlinked-parent": lambda base: base / "W" / "sub" / "linkdir" / "t",
}
#: Where each target really lands.
LANDS = {"inside": "W/t", "outside": "O/t", "symlink": "O/t", "dotdot": "O/t", "symlinked-parent": "O/deep/t"}


def build(base: Path) -> None:
    (base / "W" / "sub").mkdir(parents=True)
    (base / "O" / "deep").mkdir(parents=True)
    (base / "W" / "link_out").symlink_to(base / "O")
    (base / "W" / "sub" / "linkdir").symlink_to(base / "O" / "deep")
    (base / "W" / "src.txt").write_text("source")


WRITE_OPS = ["writeFile", "createDirectory", "remove", "copy-to"]


def request(op: str, target: Path, base: Path, sandbox: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if op == "writeFile":
        return "fs/writeFile", {"path": uri(target), "dataBase64": "bmV3", "sandbox": sandbox}
    if op == "createDirectory":
        return "fs/createDirectory", {"path": uri(target), "recursive": True, "sandbox": sandbox}
    if op == "remove":
        return "fs/remove", {"path": uri(target), "recursive": True, "force": False, "sandbox": sandbox}
    if op == "copy-to":
        src = uri(base / "W" / "src.txt")
        return "fs/copy", {
            "sourcePath": src,
            "destinationPath": uri(target),
            "recursive": False,
            "sandbox": sandbox,
        }
    if op == "copy-from":
        dst = uri(base / "W" / "copied.txt")
        return "fs/copy", {
            "sourcePath": uri(target),
            "destinationPath": dst,
            "recursive": False,
            "sandbox": sandbox,
        }
    assert op == "readFile"
    return "fs/readFile", {"path": uri(target), "sandbox": sandbox}


def expected_write(policy: str, target: str) -> tuple[int, str] | None:
    if policy == "danger-full-access" or (policy == "workspace-write" and target == "inside"):
        return None
    return EROFS


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("op", WRITE_OPS)
@pytest.mark.parametrize("policy", ["read-only", "workspace-write", "danger-full-access"])
async def test_writes_land_only_where_the_policy_allows(
    server: ServerProc, tmp_path: Path, policy: str, op: str, target: str
) -> None:
    base = tmp_path.resolve()
    build(base)
    if op == "remove":
        (base / LANDS[target]).write_text("precious")
    sandbox = policy_shape(policy, str(base / "W"), str(base / "O"))
    before = snapshot(base)
    async with raw_client(server.url) as c:
        await c.initialize()
        got = await c.call(*request(op, TARGETS[target](base), base, sandbox))
        status = await c.call("environment/status", {})
    assert status["result"] == {"status": "ready"}
    want = expected_write(policy, target)
    if want is not None:
        assert (got["error"]["code"], got["error"]["message"]) == want, got
        assert snapshot(base) == before  # nothing anywhere changed
        return
    assert "result" in got, got
    after = snapshot(base)
    landed = LANDS[target]
    if op == "remove":
        assert landed not in after
    else:
        assert after[landed] in ({"writeFile": "new", "copy-to": "source"}.get(op, "dir"),)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == {landed}


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("op", ["readFile", "copy-from"])
@pytest.mark.parametrize("policy", ["read-only", "workspace-only-read", "deny-outside", "danger-full-access"])
async def test_reads_see_only_what_the_policy_lets_them_see(
    server: ServerProc, tmp_path: Path, policy: str, op: str, target: str
) -> None:
    base = tmp_path.resolve()
    build(base)
    (base / LANDS[target]).write_text("data")
    sandbox = policy_shape(policy, str(base / "W"), str(base / "O"))
    if op == "copy-from" and policy != "danger-full-access":
        # the copy's destination must be writable for the read side to be what decides
        sandbox["permissions"]["file_system"]["entries"].append(
            entry({"type": "path", "path": uri(base / "W")}, "write")
        )
    async with raw_client(server.url) as c:
        await c.initialize()
        got = await c.call(*request(op, TARGETS[target](base), base, sandbox))
    escapes = target != "inside"
    want = {"workspace-only-read": ENOENT, "deny-outside": EACCES}.get(policy) if escapes else None
    if want is None:
        assert "result" in got, got
        if op == "readFile":
            assert got["result"] == {"dataBase64": "ZGF0YQ=="}
        else:
            assert (base / "W" / "copied.txt").read_text() == "data"
    else:
        assert (got["error"]["code"], got["error"]["message"]) == want, got
        assert not (base / "W" / "copied.txt").exists()


async def test_unknown_policy_shape_is_refused_before_anything_is_touched(
    server: ServerProc, tmp_path: Path
) -> None:
    base = tmp_path.resolve()
    build(base)
    before = snapshot(base)
    async with raw_client(server.url) as c:
        await c.initialize()
        got = await c.call(
            "fs/remove",
            {
                "path": uri(base / "W" / "src.txt"),
                "recursive": False,
                "force": False,
                "sandbox": {"permissions": {"type": "weird"}},
            },
        )
    assert got["error"] == {
        "code": -32602,
        "message": "unknown variant `weird`, expected one of `managed`, `disabled`, `external`",
    }
    assert snapshot(base) == before


async def test_relative_and_foreign_paths_are_invalid_params(server: ServerProc, tmp_path: Path) -> None:
    sandbox = policy_shape("workspace-write", str(tmp_path), str(tmp_path))
    async with raw_client(server.url) as c:
        await c.initialize()
        relative = await c.call("fs/writeFile", {"path": "W/t", "dataBase64": "", "sandbox": sandbox})
        foreign = await c.call("fs/writeFile", {"path": "http://h/t", "dataBase64": "", "sandbox": sandbox})
    assert relative["error"] == {"code": -32602, "message": "invalid URI: relative URL without a base"}
    assert foreign["error"] == {"code": -32602, "message": "unsupported path URI scheme `http`"}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("fs/getMetadata", lambda t: {"path": uri(t)}),
        ("fs/readDirectory", lambda t: {"path": uri(t.parent)}),
        ("fs/canonicalize", lambda t: {"path": uri(t)}),
        ("fs/open", lambda t: {"handleId": "h", "path": uri(t), "mode": "read"}),
        (
            "fs/walk",
            lambda t: {
                "path": uri(t.parent),
                "options": {
                    "maxDepth": 3,
                    "maxDirectories": 10,
                    "maxEntries": 10,
                    "followDirectorySymlinks": False,
                },
            },
        ),
    ],
)
@pytest.mark.parametrize("target", ["symlink", "dotdot", "outside"])
async def test_every_read_method_hides_what_the_policy_hides(
    server: ServerProc, tmp_path: Path, method: str, params: Callable[[Path], dict[str, Any]], target: str
) -> None:
    base = tmp_path.resolve()
    build(base)
    (base / "O" / "t").write_text("data")
    sandbox = policy_shape("workspace-only-read", str(base / "W"), str(base / "O"))
    async with raw_client(server.url) as c:
        await c.initialize()
        hidden = await c.call(method, {**params(TARGETS[target](base)), "sandbox": sandbox})
        visible = await c.call(method, {**params(base / "W" / "src.txt"), "sandbox": sandbox})
    assert (hidden["error"]["code"], hidden["error"]["message"]) == ENOENT, hidden
    assert "result" in visible, visible



M = TypeVar("M", bound=BaseModel)


def _parse(model: type[M], params: Any) -> M:
    """The exec-server's params validation, as its connection runs it."""
    return validate(model, params, Framing.BARE)
