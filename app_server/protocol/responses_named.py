"""Codex's names for the results pycodex shapes with a shared model.

Several methods answer `{}` (``EmptyObject``) or share one result shape; Codex names each method's result
on its own (`ThreadDeleteResponse`, `ThreadSectionCreateResponse`...), and SDKs generated from its schema
(and the drift check, which looks results up by those names) expect them. Each class here is that name
for the same wire shape: a subclass that adds nothing. Handlers return these.
"""

from __future__ import annotations

from .base import EmptyObject
from .thread_history import BackgroundTerminalsListResponse, BackgroundTerminalsTerminateResponse
from .thread_sections import ThreadSectionResponse

__all__ = [
    "MemoryResetResponse",
    "ThreadApproveGuardianDeniedActionResponse",
    "ThreadAttachmentRemoveResponse",
    "ThreadBackgroundTerminalsCleanResponse",
    "ThreadBackgroundTerminalsListResponse",
    "ThreadBackgroundTerminalsTerminateResponse",
    "ThreadCompactStartResponse",
    "ThreadDeleteResponse",
    "ThreadMemoryModeSetResponse",
    "ThreadPredictionRequestResponse",
    "ThreadQueueReorderResponse",
    "ThreadSampleCancelResponse",
    "ThreadSectionCreateResponse",
    "ThreadSectionDeleteResponse",
    "ThreadSectionMoveResponse",
    "ThreadSectionUpdateResponse",
    "ThreadSettingsUpdateResponse",
    "ThreadShellCommandResponse",
]


class ThreadBackgroundTerminalsListResponse(BackgroundTerminalsListResponse):
    """The result of `thread/backgroundTerminals/list`."""


class ThreadBackgroundTerminalsTerminateResponse(BackgroundTerminalsTerminateResponse):
    """The result of `thread/backgroundTerminals/terminate`."""


class ThreadSectionCreateResponse(ThreadSectionResponse):
    """The result of `threadSection/create`: the section the server created."""


class ThreadSectionUpdateResponse(ThreadSectionResponse):
    """The result of `threadSection/update`: the section after the change."""


class ThreadBackgroundTerminalsCleanResponse(EmptyObject):
    """The result of `thread/backgroundTerminals/clean` (`{}`)."""


class ThreadSectionDeleteResponse(EmptyObject):
    """The result of `threadSection/delete` (`{}`)."""


class ThreadSectionMoveResponse(EmptyObject):
    """The result of `thread/section/move` (`{}`)."""


class ThreadDeleteResponse(EmptyObject):
    """The result of `thread/delete` (`{}`)."""


class ThreadMemoryModeSetResponse(EmptyObject):
    """The result of `thread/memoryMode/set` (`{}`)."""


class MemoryResetResponse(EmptyObject):
    """The result of `memory/reset` (`{}`)."""


class ThreadCompactStartResponse(EmptyObject):
    """The result of `thread/compact/start` (`{}`; the compaction reports through notifications)."""


class ThreadShellCommandResponse(EmptyObject):
    """The result of `thread/shellCommand` (`{}`)."""


class ThreadSettingsUpdateResponse(EmptyObject):
    """The result of `thread/settings/update` (`{}`)."""


class ThreadQueueReorderResponse(EmptyObject):
    """The result of `thread/queue/reorder` (`{}`)."""


class ThreadAttachmentRemoveResponse(EmptyObject):
    """The result of `thread/attachment/remove` (`{}`)."""


class ThreadSampleCancelResponse(EmptyObject):
    """The result of `thread/sample/cancel` (`{}`)."""


class ThreadPredictionRequestResponse(EmptyObject):
    """The result of `thread/prediction/request` (`{}`)."""


class ThreadApproveGuardianDeniedActionResponse(EmptyObject):
    """The result of `thread/approveGuardianDeniedAction` (`{}`)."""
