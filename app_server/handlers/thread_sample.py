"""thread/sample: one model response over a loaded thread's context plus a prompt, outside any turn.

As Codex 0.169 does (seen against a fake Responses server), the request carries the thread's whole
model-visible history and its tools, then the prompt as a user message; nothing is added to the thread,
no turn starts and no notification is sent. thread/sample/cancel with this request's id stops it: the
sample then answers -32603 "sample canceled". The answer is the response's id, its assistant text (null when
the model called a tool or said nothing) and its token usage. The source must be loaded ("thread/sample
requires a loaded source") and ``expectedTurnId`` must be its latest turn, finished unless
``allowInProgressTurn``. ``effort`` is not applied: Codex applies it only where the provider keeps the
prompt cache across an effort change, which pycodex does not know of any provider. ``disableMcp``,
``interruptOnCancel``, ``responsesapiClientMetadata``, ``threadSource`` and ``turnTrigger`` change nothing here
either: the request is the one a step of the thread's turn would send (the runner builds it).
"""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.handlers.thread_controls import SAMPLES
from app_server.model import events as ev
from app_server.model.errors import ModelError, RetryNotice
from app_server.protocol import thread_experimental as p
from app_server.protocol.base import to_wire
from app_server.session import Deferred
from app_server.store import new_uuid7, parse_thread_id
from app_server.threads.prompt import user_message_item
from app_server.threads.runner import TurnRunner
from app_server.threads.sampling import ItemDone, SampleMapper, ToolCall
from app_server.threads.state import ThreadRuntime, TurnState
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidRequest

__all__ = ["thread_sample"]

NOT_LATEST = "sample source turn must be the latest finished turn"


def _check_source(thread: ThreadRuntime, params: p.ThreadSampleParams) -> None:
    active = thread.active
    if active is not None:
        latest, finished = active.id, False
    elif thread.turns:
        latest, finished = str(thread.turns[-1].get("id")), True
    else:
        raise InvalidRequest(NOT_LATEST)
    if params.expected_turn_id != latest or not (finished or params.allow_in_progress_turn):
        raise InvalidRequest(NOT_LATEST)


async def _no_retry_notice(notice: RetryNotice) -> None:
    """A sample has no turn to announce a retry on; the provider's retries still happen."""


async def _sample(runner: TurnRunner, prompt: str) -> tuple[str | None, str | None, ev.Usage | None]:
    """(response id, assistant text or None, usage) of one request over the thread's context and ``prompt``."""
    thread = runner.thread
    body = runner.request_body()  # the runner's own request shape: a sample asks what the thread's next step would
    body["input"] = [*body["input"], user_message_item([prompt])]
    mapper = SampleMapper(thread.id, runner.turn.id)
    stream = runner.services.model.stream(thread.settings.model_provider, body, runner.request_context(),
                                          _no_retry_notice)
    response_id: str | None = None
    text: str | None = None
    called_tool = False
    usage: ev.Usage | None = None
    try:
        async for event in stream:
            if isinstance(event, ev.ResponseCreated | ev.ResponseCompleted) and event.response_id:
                response_id = event.response_id
            if isinstance(event, ev.ResponseCompleted):
                usage = event.usage
            for action in mapper.feed(event):
                if isinstance(action, ItemDone) and action.item.get("type") == "agentMessage":
                    text = (text or "") + str(action.item.get("text") or "")
                elif isinstance(action, ToolCall):
                    called_tool = True
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    return response_id, None if called_tool or not text else text, usage


async def thread_sample(ctx: HandlerContext, params: p.ThreadSampleParams) -> Deferred:
    """Checked now; answered when the model has answered, the connection serving other requests meanwhile
    (thread/sample/cancel among them)."""
    request_id = ctx.session.current_request_id
    thread_id = parse_thread_id(params.thread_id)
    thread = ctx.services.threads.loaded.get(thread_id)
    if thread is None:
        raise InvalidRequest("thread/sample requires a loaded source")
    _check_source(thread, params)
    sample_turn = TurnState(new_uuid7(), inputs=[])  # the request's own turn id, never registered
    runner = TurnRunner(thread=thread, turn=sample_turn,
                        services=await ctx.services.turn_services(thread, ctx.session))
    task = asyncio.ensure_future(_sample(runner, params.prompt))
    in_flight = SAMPLES.setdefault(ctx.session, {})
    if request_id is not None:
        in_flight[request_id] = task

    async def answer() -> JsonObj:
        try:
            response_id, text, usage = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the connection went away: not a cancel of the sample
            raise InternalError("sample canceled") from None
        except ModelError as exc:
            if task.cancelling():  # the model client turned the cancel into a closed stream
                raise InternalError("sample canceled") from None
            raise InternalError(f"thread/sample failed: {exc.payload.message}") from None
        finally:
            task.cancel()
            if request_id is not None and in_flight.get(request_id) is task:
                del in_flight[request_id]
        return to_wire(p.ThreadSampleResponse(
            source_turn_id=params.expected_turn_id, response_id=response_id or "", text=text,
            input_tokens=usage.input_tokens if usage else None,
            cached_input_tokens=usage.cached_input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
        ))

    return Deferred(answer())
