"""Fork a session through ``<bin> app-server``: initialize, [thread/list], thread/fork, turn/start, and
the turn's notifications as events. Only cancel and timeout kill the app-server's process group."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agent_api.appserver import STARTUP_TIMEOUT, AppServerClient, RpcFailure, newest_thread
from agent_api.bounds import bound_completion
from agent_api.classify import MAX_SESSION_ID_BYTES
from agent_api.errors import BackendError
from agent_api.fork_events import TurnMapper
from agent_api.pinned import (
    APPROVAL_REQUIRED,
    EXTERNAL_SANDBOX_WARNING,
    is_not_found_signal,
    selection_failure_message,
    timeout_message,
)
from agent_api.process import kill_group
from agent_api.run import RunCore, RunHandle
from agent_api.validation import NormalizedRequest
from agent_api.values import Completion, Event, EventKind, SessionSelector, handle_facet
from pycodex.jsonrpc.codec import ErrorReceived, NotificationReceived, RequestReceived

__all__ = ["start_fork"]


class _Failure(Exception):
    """A classified failure of the flow; ``message`` is pinned and safe."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


async def start_fork(binary: Sequence[str], request: NormalizedRequest, env: dict[str, str]) -> RunHandle:
    """Start a fork run: an app-server child, ``thread/fork`` of the selected session, then one turn."""
    core = RunCore(request.agent_kind)
    handle = core.handle()
    try:
        client = await AppServerClient.start(binary, cwd=request.working_dir, env=env)
    except (OSError, ValueError):
        core.spawn_failed(f"{request.agent_kind} backend error: spawn (details redacted when unsafe)")
        return handle
    core.track(asyncio.get_running_loop().create_task(_supervise(core, client, request)))
    return handle


async def _supervise(core: RunCore, client: AppServerClient, request: NormalizedRequest) -> None:
    try:
        result, tail = await _outcome(core, client, request)
    finally:
        # The app-server is gone before the completion resolves: nothing outlives the run.
        await client.close()
    await core.finish(result, tail)


async def _outcome(
    core: RunCore, client: AppServerClient, request: NormalizedRequest
) -> tuple[Completion | BackendError, Event | None]:
    body = asyncio.ensure_future(_run(core, client, request))
    cancel = asyncio.ensure_future(core.cancelled.wait())
    try:
        done, _ = await asyncio.wait({body, cancel}, timeout=request.timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        cancel.cancel()
    if body not in done:
        kill_group(client.proc)
        body.cancel()
        await asyncio.gather(body, return_exceptions=True)
        message = "cancelled" if cancel in done else timeout_message(request.agent_kind)
        return BackendError(message), core.error_event(message)
    try:
        return body.result()
    except _Failure as failure:
        return BackendError(failure.message), core.error_event(failure.message)
    except Exception:
        message = f"{request.agent_kind} app-server rpc error"
        return BackendError(message), core.error_event(message)


async def _run(core: RunCore, client: AppServerClient, request: NormalizedRequest) -> tuple[Completion, Event | None]:
    kind = request.agent_kind
    selector = request.policy.fork or SessionSelector()
    try:
        await asyncio.wait_for(client.initialize(), STARTUP_TIMEOUT)
    except (RpcFailure, TimeoutError) as exc:
        raise _Failure(f"{kind} app-server handshake failed") from exc
    cwd = str(request.working_dir)
    if request.policy.external_sandbox:
        await core.emit(Event(kind, EventKind.STATUS, "status", message=EXTERNAL_SANDBOX_WARNING))
    try:
        source = selector.id
        if source is None:
            source = newest_thread(await client.list_threads(cwd=request.working_dir))
            if source is None:
                raise _Failure(selection_failure_message(selector))
        approval = "never" if request.policy.non_interactive or request.policy.external_sandbox else (
            request.policy.approval_policy)
        sandbox = "danger-full-access" if request.policy.external_sandbox else request.policy.sandbox_mode
        params = {"threadId": source, "cwd": cwd, "approvalPolicy": approval, "sandbox": sandbox}
        try:
            forked = await client.call("thread/fork", params)
        except RpcFailure as exc:
            if is_not_found_signal(exc.message):
                raise _Failure(selection_failure_message(selector)) from exc
            raise
        thread = forked.get("thread") if isinstance(forked, dict) else None
        new_id = thread.get("id") if isinstance(thread, dict) else None
        if not isinstance(new_id, str) or not new_id.strip():
            raise _Failure(f"{kind} app-server rpc error")
        size = len(new_id.encode())
        if size > MAX_SESSION_ID_BYTES:
            await core.emit(Event(kind, EventKind.STATUS, "status", message=f"session handle id oversize: len_bytes={size}"))
            facet = None
        else:
            facet = handle_facet(new_id)
            await core.emit(Event(kind, EventKind.STATUS, "status", data=facet))
        return await _turn(core, client, request, new_id, approval, facet)
    except RpcFailure as exc:
        raise _Failure(f"{kind} app-server rpc error") from exc


async def _turn(
    core: RunCore, client: AppServerClient, request: NormalizedRequest, thread_id: str,
    approval: str | None, facet: dict[str, object] | None,
) -> tuple[Completion, Event | None]:
    kind = request.agent_kind
    mapper = TurnMapper(kind, thread_id)
    request_id = await client.request("turn/start", {
        "threadId": thread_id,
        "input": [{"type": "text", "text": request.prompt, "text_elements": []}],
        "approvalPolicy": approval,
        "cwd": str(request.working_dir),
    })
    while not mapper.done:
        msg = await client.next_message()
        if msg is None:
            raise _Failure(f"{kind} app-server closed unexpectedly")
        if isinstance(msg, ErrorReceived) and msg.id == request_id:
            raise _Failure(f"{kind} app-server rpc error")
        if isinstance(msg, RequestReceived):
            raise _Failure(APPROVAL_REQUIRED)  # already declined by the client; nobody can approve
        if isinstance(msg, NotificationReceived):
            for event in mapper.feed(msg.method, msg.params):
                await core.emit(event)
    if mapper.failed:
        message = f"{kind} turn failed"
        return bound_completion(Completion(exit_code=1, data=facet)), core.error_event(message)
    return bound_completion(Completion(exit_code=0, final_text=mapper.final_text, data=facet)), None
