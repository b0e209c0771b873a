"""The output item that answers a model's tool call: one home for its shape.

Codex gives outputs their own ids (``fco_``/``ctco_`` + a UUIDv7); the model API accepts them as history.
A freeform (``custom``) call is answered with a ``custom_tool_call_output``, a function call with a
``function_call_output``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app_server.store import new_uuid7
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall

__all__ = ["call_output"]


def call_output(call: ToolCall, text: str) -> JsonObj:
    """The item answering ``call`` with ``text``."""
    if call.custom:
        return {"type": "custom_tool_call_output", "id": f"ctco_{new_uuid7()}", "call_id": call.call_id,
                "output": text}
    return {"type": "function_call_output", "id": f"fco_{new_uuid7()}", "call_id": call.call_id, "output": text}
