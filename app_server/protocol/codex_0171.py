"""Codex 0.171 additions to params pycodex already accepts (see docs/codex-0.171.md). They are honoured only
for clients that say they are 0.171 or newer in ``initialize.clientInfo.version``; the schema pycodex exports
stays the 0.169 one."""

# Annotations are evaluated as the classes are made (no `from __future__ import annotations`): pydantic
# would otherwise compile each string annotation again, ~15% of this module's import on the thread/start path.
import re
from typing import Annotated

from pydantic import Field

from .threads import ThreadListParams

VERSION_0171 = (0, 171)
_VERSION = re.compile(r"^(\d+)\.(\d+)")


def speaks_0171(client_version: str) -> bool:
    """Whether a client's `clientInfo.version` is 0.171 or newer (it may send 0.171's fields)."""
    match = _VERSION.match(client_version.strip())
    return match is not None and (int(match[1]), int(match[2])) >= VERSION_0171


class ThreadListParams0171(ThreadListParams):
    """Params of `thread/list`."""

    #: Restrict the listing to these ids before pagination; an empty list matches nothing.
    included_thread_ids: Annotated[list[str] | None, Field(max_length=100)] = None
