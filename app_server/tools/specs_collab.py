"""The ``multi_agent_v1`` namespace: the sub-agent tools offered to a model without catalog metadata.

Shapes as Codex 0.169 sends them (tests/data/tools/codex_0169_tools.json); descriptions are our own.
"""

from __future__ import annotations

from pycodex.json_types import JsonObj

__all__ = ["MULTI_AGENT_NAMESPACE", "MULTI_AGENT_V1"]

MULTI_AGENT_NAMESPACE = "multi_agent_v1"

_ITEM: JsonObj = {
    "type": "object",
    "properties": {
        "audio_url": {"type": "string", "description": "An audio data URL (type audio)."},
        "image_url": {"type": "string", "description": "An image URL or data URL (type image)."},
        "name": {"type": "string", "description": "A skill or mention name (type skill / mention)."},
        "path": {"type": "string", "description": "A file path (type local_image, skill, mention)."},
        "text": {"type": "string", "description": "The text (type text)."},
        "type": {"type": "string", "description": "text, image, local_image, skill or mention."},
    },
    "additionalProperties": False,
}


def _tool(name: str, description: str, properties: JsonObj, required: list[str] | None) -> JsonObj:
    parameters: JsonObj = {"type": "object", "properties": properties}
    if required is not None:
        parameters["required"] = required
    parameters["additionalProperties"] = False
    return {"type": "function", "name": name, "description": description, "strict": False,
            "parameters": parameters}


_MESSAGE = {"type": "string", "description": "Plain-text input for the agent (or use items)."}
_ITEMS = {"type": "array", "description": "Structured input items instead of message.", "items": _ITEM}

MULTI_AGENT_V1: JsonObj = {
    "type": "namespace",
    "name": MULTI_AGENT_NAMESPACE,
    "description": "Sub-agents: start helpers that work on a task in their own thread, talk to them, wait "
    "for their answers and close them.",
    "tools": [
        _tool("close_agent", "Close a sub-agent that is no longer needed; returns its last status.",
              {"target": {"type": "string", "description": "The agent id spawn_agent returned."}}, ["target"]),
        _tool("resume_agent", "Reopen a closed sub-agent so that it can take input again.",
              {"id": {"type": "string", "description": "The agent id."}}, ["id"]),
        _tool("send_input", "Send more input to a running sub-agent, optionally interrupting its current work.",
              {"interrupt": {"type": "boolean", "description": "Stop the agent's current turn first."},
               "items": _ITEMS, "message": _MESSAGE,
               "target": {"type": "string", "description": "The agent id."}}, ["target"]),
        _tool("spawn_agent", "Start a sub-agent on a task; it runs in its own thread and answers when done. "
              "Returns the agent's id.",
              {"fork_context": {"type": "boolean", "description": "Give the agent a copy of this conversation."},
               "items": _ITEMS, "message": _MESSAGE,
               "model": {"type": "string", "description": "The model for the agent (default: this one)."},
               "reasoning_effort": {"type": "string", "description": "Its reasoning effort."}}, None),
        _tool("wait_agent", "Wait until one of the named sub-agents finishes or the timeout passes; returns "
              "their statuses.",
              {"targets": {"type": "array", "description": "Agent ids to wait for.", "items": {"type": "string"}},
               "timeout_ms": {"type": "number", "description": "How long to wait, in ms (default 30000)."}},
              ["targets"]),
    ],
}
