"""A newer client's unknown params fields: ignored on every method of both servers, except a sandbox,
approval or permission field, which is refused (see pycodex/jsonrpc/unknown_fields.py)."""

from __future__ import annotations

import asyncio
import logging
import typing
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from app_server.handlers import register_all
from app_server.router import Router
from exec_server.router import ExecRouter
from pycodex.jsonrpc import router as rpc
from pycodex.jsonrpc.errors import InvalidParams, RpcError
from pycodex.jsonrpc.serde import Framing
from pycodex.jsonrpc.unknown_fields import find_unknown_fields, is_safety_key


class _NoServices:
    """Registration touches no service."""


def _app_router() -> Router:
    router = Router()
    register_all(router, _NoServices())  # type: ignore[arg-type]
    router.load_all()
    return router


def _routes() -> list[tuple[str, rpc.Router[Any], rpc.Route[Any]]]:
    app, exe = _app_router(), ExecRouter()
    return [*(("app", app, r) for r in app), *(("exec", exe, r) for r in exe)]


ROUTES = [r for r in _routes() if r[2].params_model is not None]


def _nested_models(model: type[BaseModel]) -> set[type[BaseModel]]:
    seen: set[type[BaseModel]] = set()
    todo: list[object] = [model]
    while todo:
        item = todo.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            if item not in seen:
                seen.add(item)
                todo.extend(f.annotation for f in item.model_fields.values())
        else:
            todo.extend(typing.get_args(item))
    return seen


def test_the_walk_covers_both_servers() -> None:
    servers = {name for name, _, _ in ROUTES}
    assert servers == {"app", "exec"} and len(ROUTES) > 150
    assert any(r.method == "mcpServerStatus/list" for _, _, r in ROUTES)


@pytest.mark.parametrize(("server", "router", "route"), ROUTES, ids=[f"{s}:{r.method}" for s, _, r in ROUTES])
def test_every_params_model_ignores_an_unknown_field(server: str, router: rpc.Router[Any], route: rpc.Route[Any]) -> None:
    model = route.params_model
    assert model is not None
    for nested in _nested_models(model):
        assert nested.model_config.get("extra") != "forbid", nested.__name__
    params = {"zzFutureField": {"from": "a newer client"}}
    try:
        model.model_validate(params, strict=router.framing is Framing.REQUEST)
    except ValidationError as exc:
        # Required fields are missing here, but the extra key itself is never what is wrong.
        assert "extra_forbidden" not in {e["type"] for e in exc.errors()}
    else:
        router.parse(route, params, True)  # the whole parse step, unknown-field check included
    assert find_unknown_fields(model, params).ignored == ["zzFutureField"]
    assert find_unknown_fields(model, {"zzSandboxFuture": True}).refused == ["zzSandboxFuture"]
    if server == "app":
        with pytest.raises(InvalidParams, match="zzSandboxFuture"):
            router.check_unknown_fields(route, {"zzSandboxFuture": True})
    else:  # the exec-server ignores them too (see ExecRouter.refuse_unknown_safety_fields)
        router.check_unknown_fields(route, {"zzSandboxFuture": True})


def test_mcp_status_list_takes_the_0171_environment_id_and_logs_it_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    router = _app_router()
    route = router.route("mcpServerStatus/list")
    assert route is not None
    with caplog.at_level(logging.DEBUG, logger="pycodex.jsonrpc.router"):
        parsed = router.parse(route, {"threadId": "t", "environmentId": "local"}, True)
    assert parsed is not None and parsed.model_dump()["threadId"] == "t"
    assert "ignoring unknown fields environmentId" in caplog.text


def test_unknown_keys_inside_a_sandbox_or_approval_field_are_refused() -> None:
    router = _app_router()
    route = router.route("thread/start")
    assert route is not None
    base = {"cwd": "/tmp"}
    router.parse(route, {**base, "sandbox": "read-only", "futureUiHint": 1}, True)  # known + harmless
    refused = [
        ({**base, "sandboxPolicyV2": {"type": "readOnly"}}, "sandboxPolicyV2"),
        ({**base, "permissionProfile": "strict"}, "permissionProfile"),
        ({**base, "approvalsReviewer2": "guardian"}, "approvalsReviewer2"),
        ({**base, "approvalPolicy": {"granular": {"sandbox_approval": True, "rules": True, "mcp_elicitations": True,
                                                   "future_gate": True}}}, "approvalPolicy.granular.future_gate"),
    ]
    for params, path in refused:
        with pytest.raises(InvalidParams) as caught:
            router.parse(route, params, True)
        assert caught.value.message.startswith(f"Invalid request: unknown field `{path}`")


def test_turn_start_sandbox_policy_with_an_unknown_restriction_is_refused() -> None:
    router = _app_router()
    route = router.route("turn/start")
    assert route is not None
    policy = {"type": "workspaceWrite", "writableRoots": [], "networkAccess": False, "futureDenyPaths": ["/etc"]}
    with pytest.raises(InvalidParams, match=r"sandboxPolicy\.futureDenyPaths"):
        router.parse(route, {"threadId": "t", "input": [], "sandboxPolicy": policy}, True)


def test_safety_words() -> None:
    assert all(is_safety_key(k) for k in ("sandbox", "approval_policy", "writableRoots", "dangerouslyBypass"))
    assert not any(is_safety_key(k) for k in ("environmentId", "cwd", "model", "limit"))


def test_a_method_name_is_clipped_in_the_unknown_method_error() -> None:
    router = _app_router()
    name = "x" * (1 << 20)
    error = asyncio.run(_unknown(router, name))
    assert len(error) < 10_000 and ("x" * 100 + "…`") in error and "x" * 101 not in error
    exec_error = ExecRouter().unknown_method(None, name).message  # type: ignore[arg-type]
    assert exec_error == f"exec-server stub does not implement `{'x' * 100}…` yet"


class _Session:
    initialized = True
    experimental_api = True


async def _unknown(router: Router, name: str) -> str:
    try:
        await router.dispatch(_Session(), name, {}, True)  # type: ignore[arg-type]
    except RpcError as exc:
        return exc.message
    raise AssertionError("an unknown method succeeded")
