"""Params and responses of Codex 0.169's thread realtime methods (thread/realtime/start, appendAudio,
appendText, appendSpeech, stop). Field order is Codex's, as its `--experimental` schema lists them; every
response is ``{}`` (the session's progress arrives as thread/realtime/* notifications)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from .base import ParamsModel, WireModel
from .common import ThreadId

__all__ = [
    "ThreadRealtimeAppendAudioParams",
    "ThreadRealtimeAppendAudioResponse",
    "ThreadRealtimeAppendSpeechParams",
    "ThreadRealtimeAppendSpeechResponse",
    "ThreadRealtimeAppendTextParams",
    "ThreadRealtimeAppendTextResponse",
    "ThreadRealtimeAudioChunk",
    "ThreadRealtimeInitialItem",
    "ThreadRealtimeStartParams",
    "ThreadRealtimeStartResponse",
    "ThreadRealtimeStopParams",
    "ThreadRealtimeStopResponse",
]

ConversationTextRole = Literal["user", "developer", "assistant"]
RealtimeVoice = Literal[
    "alloy", "arbor", "ash", "aube", "ballad", "breeze", "bubbie", "cedar", "coral", "cove", "echo", "ember",
    "haetsal", "hanul", "himari", "juniper", "leher", "maple", "marin", "miko", "neer", "porto", "rindo", "rio",
    "rivage", "sage", "selva", "shimmer", "sol", "sonna", "spruce", "tinta", "vale", "verse", "viola",
]


class ThreadRealtimeInitialItem(WireModel):
    """A role-bearing text item included when a realtime V3 session starts."""

    role: ConversationTextRole
    text: str


class WebsocketThreadRealtimeStartTransport(WireModel):
    """The app-server opens a websocket to the realtime service."""

    type: Literal["websocket"]


class WebrtcThreadRealtimeStartTransport(WireModel):
    """The client negotiates WebRTC; ``sdp`` is its offer."""

    type: Literal["webrtc"]
    sdp: str


class ExistingCallThreadRealtimeStartTransport(WireModel):
    """A realtime call the client already created and negotiated."""

    type: Literal["existingCall"]
    call_id: str


ThreadRealtimeStartTransport = Annotated[
    WebsocketThreadRealtimeStartTransport | WebrtcThreadRealtimeStartTransport
    | ExistingCallThreadRealtimeStartTransport,
    Field(discriminator="type"),
]


class ThreadRealtimeStartParams(ParamsModel):
    """Params of `thread/realtime/start`."""

    METHOD: ClassVar[str] = "thread/realtime/start"

    thread_id: ThreadId
    output_modality: Literal["text", "audio"]
    prompt: str | None = None
    realtime_session_id: str | None = None
    voice_session_id: str | None = None
    include_startup_context: bool | None = None
    transport: ThreadRealtimeStartTransport | None = None
    voice: RealtimeVoice | None = None
    model: str | None = None
    version: Literal["v1", "v2", "v3"] | None = None
    initial_items: list[ThreadRealtimeInitialItem] | None = None
    realtime_start_instructions: str | None = None
    realtime_end_instructions: str | None = None
    backend_reasoning_status: bool = False
    client_managed_handoffs: bool | None = None
    codex_response_handoff_mode: Literal["thinking", "commentary", "bemTags"] | None = None
    codex_response_handoff_channel_prefixes: dict[str, list[str]] | None = None
    codex_responses_as_items: bool | None = None
    codex_response_item_prefix: str | None = None
    delegation_ack_filler: bool | None = None
    flush_transcript_tail_on_session_end: bool | None = None


class ThreadRealtimeStartResponse(WireModel):
    """The result of `thread/realtime/start`: ``{}``, the start was accepted (not that it succeeded)."""


class ThreadRealtimeAudioChunk(WireModel):
    """One chunk of audio input."""

    data: str
    sample_rate: Annotated[int, Field(ge=0)]
    num_channels: Annotated[int, Field(ge=0)]
    samples_per_channel: Annotated[int, Field(ge=0)] | None = None
    item_id: str | None = None


class ThreadRealtimeAppendAudioParams(ParamsModel):
    """Params of `thread/realtime/appendAudio`."""

    METHOD: ClassVar[str] = "thread/realtime/appendAudio"

    thread_id: ThreadId
    audio: ThreadRealtimeAudioChunk


class ThreadRealtimeAppendAudioResponse(WireModel):
    """The result of `thread/realtime/appendAudio`: ``{}``."""


class ThreadRealtimeAppendTextParams(ParamsModel):
    """Params of `thread/realtime/appendText`."""

    METHOD: ClassVar[str] = "thread/realtime/appendText"

    thread_id: ThreadId
    text: str
    role: ConversationTextRole = "user"


class ThreadRealtimeAppendTextResponse(WireModel):
    """The result of `thread/realtime/appendText`: ``{}``."""


class ThreadRealtimeAppendSpeechParams(ParamsModel):
    """Params of `thread/realtime/appendSpeech`."""

    METHOD: ClassVar[str] = "thread/realtime/appendSpeech"

    thread_id: ThreadId
    text: str


class ThreadRealtimeAppendSpeechResponse(WireModel):
    """The result of `thread/realtime/appendSpeech`: ``{}``."""


class ThreadRealtimeStopParams(ParamsModel):
    """Params of `thread/realtime/stop`."""

    METHOD: ClassVar[str] = "thread/realtime/stop"

    thread_id: ThreadId


class ThreadRealtimeStopResponse(WireModel):
    """The result of `thread/realtime/stop`: ``{}``."""
