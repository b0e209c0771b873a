"""Params and responses of thread sections, thread/section/move, thread/delete and thread/metadata/update."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from .base import ParamsModel, WireModel
from .common import OptionalU32, ThreadId


class SectionAppearance(WireModel):
    color: str | None = None
    icon: str | None = None


class ThreadSection(WireModel):
    id: str
    name: str
    appearance: SectionAppearance | None = None


class ThreadSectionListParams(ParamsModel):
    METHOD: ClassVar[str] = "threadSection/list"

    cursor: str | None = None
    limit: OptionalU32 = None


class ThreadSectionListResponse(WireModel):
    data: list[ThreadSection]
    next_cursor: str | None = None


class ThreadSectionCreateParams(ParamsModel):
    METHOD: ClassVar[str] = "threadSection/create"

    name: str
    appearance: SectionAppearance | None = None


class ThreadSectionResponse(WireModel):
    section: ThreadSection


class ThreadSectionUpdateParams(ParamsModel):
    METHOD: ClassVar[str] = "threadSection/update"

    section_id: str
    name: str
    appearance: SectionAppearance | None = None


class ThreadSectionDeleteParams(ParamsModel):
    METHOD: ClassVar[str] = "threadSection/delete"

    section_id: str


class ThreadSectionMoveParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/section/move"

    thread_id: ThreadId
    section_id: str | None = None
    before_thread_id: str | None = None


class ThreadDeleteParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/delete"

    thread_id: ThreadId


class GitInfoPatch(WireModel):
    sha: str | None = None
    branch: str | None = None
    origin_url: str | None = None


class ThreadMetadataUpdateParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/metadata/update"

    thread_id: ThreadId
    git_info: GitInfoPatch | None = None
    daybreak_enabled: bool | None = None


class ThreadMetadataUpdateResponse(WireModel):
    thread: dict[str, Any]


class ThreadSearchParams(ParamsModel):
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
    METHOD: ClassVar[str] = "thread/searchOccurrences"

    thread_id: ThreadId
    search_term: str
    cursor: str | None = None
    limit: OptionalU32 = None


class ThreadSearchCancelParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/search/cancel"

    request_id: int | str


class ThreadMemoryModeSetParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/memoryMode/set"

    thread_id: ThreadId
    mode: Literal["enabled", "disabled"]


class ThreadMemoryReadParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/memory/read"

    thread_id: ThreadId


class ThreadInjectItemsParams(ParamsModel):
    METHOD: ClassVar[str] = "thread/inject_items"

    thread_id: ThreadId
    items: list[Any]
