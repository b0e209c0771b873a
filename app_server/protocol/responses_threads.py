"""Responses of the thread methods served from plain dicts: search, memory, revert, queue, attachments
and review/start.

Field names and types follow Codex 0.169's response schema; field order is the order the handlers emit
(Codex's where recorded). Built with ``Model.model_validate(handler_dict)``; ``to_wire`` gives the dict back.
"""

from __future__ import annotations

from typing import Literal

from pycodex.json_types import JsonObj, JsonValue

from .base import WireModel
from .threads import Thread
from .turns import Turn

ThreadAttachmentAddOutcome = Literal["created", "existing"]


class ThreadSearchResult(WireModel):
    """One `thread/search` hit: the thread and the matching snippet."""

    thread: Thread
    snippet: str


class ThreadSearchResponse(WireModel):
    """The result of `thread/search`."""

    data: list[ThreadSearchResult]
    next_cursor: str | None = None
    backwards_cursor: str | None = None


class ThreadSearchTextRange(WireModel):
    """UTF-16 code-unit range within `snippet`."""

    start: int
    end: int


class ThreadSearchOccurrence(WireModel):
    """One visible message in a thread that matches the search, with the match's range."""

    turn_id: str
    item_id: str
    snippet: str
    snippet_match_range: ThreadSearchTextRange
    turn_cursor: str


class ThreadSearchOccurrencesResponse(WireModel):
    """The result of `thread/searchOccurrences`."""

    data: list[ThreadSearchOccurrence]
    next_cursor: str | None = None


class MemoryStatusResponse(WireModel):
    """The result of `memory/status`."""

    v2_consolidated_threads: int
    v2_ready: bool


class ThreadMemoryReadResponse(WireModel):
    """The result of `thread/memory/read`."""

    summary: str | None = None


class ThreadRevertResponse(WireModel):
    """The result of `thread/revert`."""

    thread: Thread
    turns_backwards_cursor: str | None = None
    items_backwards_cursor: str | None = None


class QueuedSubmission(WireModel):
    """One message waiting in a thread's queue: its id, the client's message id and its input."""

    id: str
    input: list[JsonObj]
    client_user_message_id: str
    responsesapi_client_metadata: dict[str, str] | None = None


class ThreadQueueAddResponse(WireModel):
    """The result of `thread/queue/add`."""

    queued_submission: QueuedSubmission


class ThreadQueueListResponse(WireModel):
    """The result of `thread/queue/list`."""

    data: list[QueuedSubmission]
    next_cursor: str | None = None


class ThreadQueueUpdateResponse(WireModel):
    """The result of `thread/queue/update`."""

    queued_submission: QueuedSubmission


class ThreadQueueDeleteResponse(WireModel):
    """The result of `thread/queue/delete`."""

    deleted: bool


class ThreadQueueStartResponse(WireModel):
    """The result of `thread/queue/start`."""

    turn: Turn


class ThreadAttachment(WireModel):
    """An independently persisted attachment associated with a thread."""

    id: str
    attachment_type: str
    identity_key: str
    payload: JsonValue
    created_at: int


class ThreadAttachmentAddResponse(WireModel):
    """The created or existing attachment. The result of `thread/attachment/add`."""

    outcome: ThreadAttachmentAddOutcome
    attachment: ThreadAttachment


class ThreadAttachmentListResponse(WireModel):
    """One page of attachments associated with the requested thread. The result of `thread/attachment/list`.

    """

    data: list[ThreadAttachment]
    next_cursor: str | None = None


class ThreadAttachmentOwner(WireModel):
    """A thread that currently owns an attachment with the requested identity."""

    thread_id: str
    archived: bool


class ThreadAttachmentOwnerListResponse(WireModel):
    """One page of matching owners, including threads without their own user messages. The result of
    `thread/attachmentOwner/list`.
    """

    data: list[ThreadAttachmentOwner]
    next_cursor: str | None = None


class ReviewStartResponse(WireModel):
    """The result of `review/start`."""

    turn: Turn
    review_thread_id: str
