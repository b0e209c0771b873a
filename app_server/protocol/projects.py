"""Params, results and notifications of Codex 0.169's experimental `project/*` family, under Codex's names.

A project is a named, ordered group of threads with workspace roots. Codex 0.171 drops ``position`` from
``Project``; pycodex keeps 0.169's shape for every client (a 0.171 client ignores the extra field).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from .base import EmptyObject, ParamsModel, WireModel
from .common import AbsolutePath, OptionalU32, SortDirection

__all__ = [
    "Project",
    "ProjectChangeType",
    "ProjectChangedNotification",
    "ProjectCreateParams",
    "ProjectCreateResponse",
    "ProjectDeleteParams",
    "ProjectDeleteResponse",
    "ProjectImportParams",
    "ProjectImportResponse",
    "ProjectListParams",
    "ProjectListResponse",
    "ProjectMoveParams",
    "ProjectMoveResponse",
    "ProjectReadParams",
    "ProjectReadResponse",
    "ProjectRoot",
    "ProjectSortKey",
    "ProjectUpdateParams",
    "ProjectUpdateResponse",
    "ThreadProjectUpdatedNotification",
]

ProjectSortKey = Literal["position", "recencyAt"]
ProjectChangeType = Literal["created", "updated", "deleted"]


class ProjectRoot(WireModel):
    """One workspace root of a project."""

    path: AbsolutePath


class Project(WireModel):
    """A project as Codex 0.169 sends it (times in Unix seconds)."""

    id: str
    name: str
    roots: list[ProjectRoot]
    metadata: dict[str, str]
    position: int
    created_at: int
    updated_at: int
    #: Newest non-archived member thread's recency, in Unix seconds; null when none exist.
    recency_at: int | None = None


class ProjectListParams(ParamsModel):
    """Params of `project/list`."""

    METHOD: ClassVar[str] = "project/list"

    cursor: str | None = None
    limit: OptionalU32 = None
    #: Defaults to position. Recency sorting always places empty projects last.
    sort_key: ProjectSortKey | None = None
    #: Requires sortKey. Defaults to asc for position and desc for recencyAt.
    sort_direction: SortDirection | None = None


class ProjectListResponse(WireModel):
    """The result of `project/list`."""

    data: list[Project]
    next_cursor: str | None = None


class ProjectReadParams(ParamsModel):
    """Params of `project/read`."""

    METHOD: ClassVar[str] = "project/read"

    project_id: str


class ProjectReadResponse(WireModel):
    """The result of `project/read`."""

    project: Project


class ProjectCreateParams(ParamsModel):
    """Params of `project/create`: a second call with the same idempotencyKey answers the first project."""

    METHOD: ClassVar[str] = "project/create"

    name: str
    roots: list[ProjectRoot]
    metadata: dict[str, str] | None = None
    idempotency_key: str


class ProjectCreateResponse(WireModel):
    """The result of `project/create`."""

    project: Project


class ProjectImportParams(ParamsModel):
    """Params of `project/import`: `project/create` that also assigns existing threads to the new project."""

    METHOD: ClassVar[str] = "project/import"

    name: str
    roots: list[ProjectRoot]
    metadata: dict[str, str] | None = None
    threads: list[str] | None = None
    idempotency_key: str


class ProjectImportResponse(WireModel):
    """The result of `project/import`."""

    project: Project


class ProjectUpdateParams(ParamsModel):
    """Params of `project/update`: each field given replaces the stored one."""

    METHOD: ClassVar[str] = "project/update"

    project_id: str
    name: str | None = None
    roots: list[ProjectRoot] | None = None
    metadata: dict[str, str] | None = None


class ProjectUpdateResponse(WireModel):
    """The result of `project/update`."""

    project: Project


class ProjectMoveParams(ParamsModel):
    """Params of `project/move`: place the project before `beforeProjectId`, or last when it is null."""

    METHOD: ClassVar[str] = "project/move"

    project_id: str
    before_project_id: str | None = None


class ProjectMoveResponse(EmptyObject):
    """The result of `project/move` (empty)."""


class ProjectDeleteParams(ParamsModel):
    """Params of `project/delete`: its threads stay, assigned to no project."""

    METHOD: ClassVar[str] = "project/delete"

    project_id: str


class ProjectDeleteResponse(EmptyObject):
    """The result of `project/delete` (empty)."""


class ProjectChangedNotification(WireModel):
    """Params of `project/changed`, sent to every experimental client after a project changed."""

    project_id: str
    change_type: ProjectChangeType


class ThreadProjectUpdatedNotification(WireModel):
    """Params of `thread/project/updated`: a thread joined a project, or left one (projectId null)."""

    thread_id: str
    project_id: str | None
