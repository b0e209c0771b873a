"""thread/realtime/start, appendAudio, appendText, appendSpeech and stop: Codex 0.169's thread-scoped voice
sessions, which run against OpenAI's realtime voice service. pycodex has no client for that service, so no
session ever runs; each method answers as Codex 0.169 does when its session cannot start:

- start: ``{}``, then ``thread/realtime/error``. Without API-key auth the message is Codex's own ("realtime
  conversation requires API key auth"); with one, it names what pycodex lacks instead of dialling out.
- appendAudio/appendText/appendSpeech: ``{}``, then the thread turns ``systemError`` and an ``error``
  notification says "conversation is not running" (``badRequest``), under a fresh id as Codex's is.
- stop: ``{}``, then ``thread/realtime/closed`` with reason "requested" (Codex sends it with no session too).

Params are checked first, and the thread must be loaded ("thread not found" otherwise, as Codex).
"""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.model.auth import stored_api_key
from app_server.protocol import notices
from app_server.protocol import thread_realtime as p
from app_server.protocol.notices import Notice
from app_server.store.ids import new_uuid7
from app_server.threads.state import ThreadRuntime

__all__ = ["append_audio", "append_speech", "append_text", "realtime_start", "realtime_stop"]

#: Codex 0.169's words when no API key is stored (its realtime client needs one; ChatGPT auth is not enough).
NEEDS_API_KEY = "realtime conversation requires API key auth"
#: pycodex's words when a key is there: the missing part is the realtime client, not the account.
NO_REALTIME_CLIENT = ("realtime conversation is unavailable: pycodex has no client for OpenAI's realtime "
                      "voice service")
NOT_RUNNING = "conversation is not running"


def _after(ctx: HandlerContext, thread: ThreadRuntime, note: Notice) -> None:
    ctx.session.after_response(lambda: thread.emit(note))


async def realtime_start(ctx: HandlerContext, params: p.ThreadRealtimeStartParams) -> p.ThreadRealtimeStartResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    key = await asyncio.to_thread(stored_api_key, ctx.services.codex_home)
    _after(ctx, thread, notices.thread_realtime_error(thread.id, NEEDS_API_KEY if key is None else NO_REALTIME_CLIENT))
    return p.ThreadRealtimeStartResponse()


async def _not_running(thread: ThreadRuntime) -> None:
    """Codex's answer to input for a session that is not running: the thread shows the failure."""
    if not thread.system_error and thread.active is None:
        thread.system_error = True
        await thread.emit_status()
    error = {"message": NOT_RUNNING, "codexErrorInfo": "badRequest", "additionalDetails": None,
             "misalignment": None}
    await thread.emit(notices.error(error, will_retry=False, thread_id=thread.id, turn_id=new_uuid7()))


def _refuse_input(ctx: HandlerContext, thread_id: str) -> None:
    thread = ctx.services.threads.get_loaded(thread_id)
    ctx.session.after_response(lambda: _not_running(thread))


async def append_audio(
    ctx: HandlerContext, params: p.ThreadRealtimeAppendAudioParams
) -> p.ThreadRealtimeAppendAudioResponse:
    _refuse_input(ctx, params.thread_id)
    return p.ThreadRealtimeAppendAudioResponse()


async def append_text(
    ctx: HandlerContext, params: p.ThreadRealtimeAppendTextParams
) -> p.ThreadRealtimeAppendTextResponse:
    _refuse_input(ctx, params.thread_id)
    return p.ThreadRealtimeAppendTextResponse()


async def append_speech(
    ctx: HandlerContext, params: p.ThreadRealtimeAppendSpeechParams
) -> p.ThreadRealtimeAppendSpeechResponse:
    _refuse_input(ctx, params.thread_id)
    return p.ThreadRealtimeAppendSpeechResponse()


async def realtime_stop(ctx: HandlerContext, params: p.ThreadRealtimeStopParams) -> p.ThreadRealtimeStopResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    _after(ctx, thread, notices.thread_realtime_closed(thread.id, "requested"))
    return p.ThreadRealtimeStopResponse()
