"""Small thread controls of Codex 0.169: the out-of-band elicitation counter, thread/sample/cancel (and the
registry of in-flight thread/sample requests it cancels), thread/prediction/request and
thread/realtime/listVoices.

The elicitation counter belongs to a loaded thread (Codex: "thread not found" for one that is not loaded);
external helpers raise it while a user approval is pending outside the app-server's own requests, and the
thread counts as paused while it is above zero. In Codex a pause also holds the unified-exec yield and
post-exit deadlines; pycodex keeps and reports the count, but its exec deadlines do not wait on it yet.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from app_server.context import HandlerContext
from app_server.protocol import responses_named as rn
from app_server.protocol import thread_controls as p
from app_server.session import Session
from pycodex.jsonrpc.errors import InvalidRequest, MethodNotFound

__all__ = [
    "SAMPLES", "decrement_elicitation", "increment_elicitation", "prediction_request", "realtime_list_voices",
    "sample_cancel",
]

#: The thread/sample requests still waiting on the model, per connection, by JSON-RPC request id.
SAMPLES: weakref.WeakKeyDictionary[Session, dict[int | str, asyncio.Task[Any]]] = weakref.WeakKeyDictionary()


async def increment_elicitation(
    ctx: HandlerContext, params: p.ThreadElicitationParams
) -> p.ThreadElicitationResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    thread.out_of_band_elicitations += 1
    count = thread.out_of_band_elicitations
    return p.ThreadElicitationResponse(count=count, paused=count > 0)


async def decrement_elicitation(
    ctx: HandlerContext, params: p.ThreadElicitationParams
) -> p.ThreadElicitationResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    if thread.out_of_band_elicitations == 0:
        raise InvalidRequest("out-of-band elicitation count is already zero")
    thread.out_of_band_elicitations -= 1
    count = thread.out_of_band_elicitations
    return p.ThreadElicitationResponse(count=count, paused=count > 0)


async def sample_cancel(
    ctx: HandlerContext, params: p.ThreadSampleCancelParams
) -> rn.ThreadSampleCancelResponse:
    """Cancel the connection's thread/sample request ``requestId`` (it then answers -32603 "sample canceled");
    ``{}`` whether or not one was in flight, as Codex. Unknown keys are ignored (Codex refuses them; a newer
    client may send some)."""
    task = SAMPLES.get(ctx.session, {}).get(params.request_id)
    if task is not None:
        task.cancel()
    return rn.ThreadSampleCancelResponse()


async def prediction_request(
    ctx: HandlerContext, params: p.ThreadPredictionRequestParams
) -> rn.ThreadPredictionRequestResponse:
    raise MethodNotFound("thread/prediction/request is not implemented yet")  # Codex 0.169's own answer


async def realtime_list_voices(ctx: HandlerContext, params: None) -> p.ThreadRealtimeListVoicesResponse:
    return p.ThreadRealtimeListVoicesResponse(voices=p.REALTIME_VOICES)
