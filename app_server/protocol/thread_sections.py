"""Params and responses of thread sections, thread/section/move, thread/delete and thread/metadata/update."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pycodex.json_types import JsonValue

from .base import EXPERIMENTAL, ParamsModel, WireModel
from .common import OptionalU32, ThreadId
from .threads import Thread


class SectionAppearance(WireModel):
    """How a thread section looks: its colour and icon."""

    color: str | None = None
    icon: str | None = None


class ThreadSection(WireModel):
    """An independently persisted, user-visible thread section."""

    id: str
    name: str
    appearance: SectionAppearance | None = None


class ThreadSectionListParams(ParamsModel):
    """Params of `threadSection/list`."""

    METHOD: ClassVar[str] = "threadSection/list"

    cursor: str | None = None
    limit: OptionalU32 = None


class ThreadSectionListResponse(WireModel):
    """The result of `threadSection/list`."""

    data: list[ThreadSection]
    next_cursor: str | None = None


class ThreadSectionCreateParams(ParamsModel):
    """Params of `threadSection/create`."""

    METHOD: ClassVar[str] = "threadSection/create"

    name: str
    appearance: SectionAppearance | None = None


class ThreadSectionResponse(WireModel):
    """The result of `threadSection/create`, `threadSection/update`."""

    section: ThreadSection


class ThreadSectionUpdateParams(ParamsModel):
    """Params of `threadSection/update`."""

    METHOD: ClassVar[str] = "threadSection/update"

    section_id: str
    name: str
    appearance: SectionAppearance | None = None


class ThreadSectionDeleteParams(ParamsModel):
    """Params of `threadSection/delete`."""

    METHOD: ClassVar[str] = "threadSection/delete"

    section_id: str


class ThreadSectionMoveParams(ParamsModel):
    """Params of `thread/section/move`."""

    METHOD: ClassVar[str] = "thread/section/move"

    thread_id: ThreadId
    section_id: str | None = None
    before_thread_id: str | None = None


class ThreadDeleteParams(ParamsModel):
    """Params of `thread/delete`."""

    METHOD: ClassVar[str] = "thread/delete"

    thread_id: ThreadId


class GitInfoPatch(WireModel):
    """Codex's `ThreadMetadataGitInfoUpdateParams`: absent keys stay, null clears, a string replaces."""

    sha: str | None = None
    branch: str | None = None
    origin_url: str | None = None


class ThreadMetadataUpdateParams(ParamsModel):
    """Params of `thread/metadata/update`."""

    METHOD: ClassVar[str] = "thread/metadata/update"

    thread_id: ThreadId
    git_info: GitInfoPatch | None = None
    daybreak_enabled: bool | None = None
    #: Omit to leave the project unchanged, "" to clear it, or an existing project's id to assign it.
    project_id: Annotated[str | None, EXPERIMENTAL] = None


class ThreadMetadataUpdateResponse(WireModel):
    """The result of `thread/metadata/update`: the thread with its new metadata."""

    thread: Thread


class ThreadSearchParams(ParamsModel):
    """Params of `thread/search`."""

    METHOD: ClassVar[str] = "thread/search"

    search_term: str
    archived: bool | None = None
    cursor: str | None = None
    limit: OptionalU32 = None
    sort_direction: Literal["asc", "desc"] | None = None
    sort_key: Literal["created_at", "updated_at", "recency_at"] | None = None
    source_kinds: list[str] | None = None
    current_account_only: bool = False
    include_attached_threads: bool = False


class ThreadSearchOccurrencesParams(ParamsModel):
    """Params of `thread/searchOccurrences`."""

    METHOD: ClassVar[str] = "thread/searchOccurrences"

    thread_id: ThreadId
    search_term: str
    cursor: str | None = None
    limit: OptionalU32 = None


class ThreadSearchCancelParams(ParamsModel):
    """Params of `thread/search/cancel`."""

    METHOD: ClassVar[str] = "thread/search/cancel"

    request_id: int | str


class ThreadMemoryModeSetParams(ParamsModel):
    """Params of `thread/memoryMode/set`."""

    METHOD: ClassVar[str] = "thread/memoryMode/set"

    thread_id: ThreadId
    mode: Literal["enabled", "disabled"]


class ThreadMemoryReadParams(ParamsModel):
    """Params of `thread/memory/read`."""

    METHOD: ClassVar[str] = "thread/memory/read"

    thread_id: ThreadId


class ThreadInjectItemsParams(ParamsModel):
    """Params of `thread/inject_items`."""

    METHOD: ClassVar[str] = "thread/inject_items"

    thread_id: ThreadId
    items: list[JsonValue]
