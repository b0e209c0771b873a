"""Codex 0.169's core TurnItem (what its rollouts hold) <-> the app-server v2 ThreadItem pycodex uses.

A rollout's `item_completed` record carries a core item: PascalCase `type`, mostly snake_case fields,
durations as `{secs, nanos}`, paths as `file://` URIs, commands as argv lists. :func:`v2_from_core` gives
the v2 item Codex's own thread/read answers for it (without startedAtMs/completedAtMs: the caller takes
those from the record); :func:`core_from_v2` gives the core item Codex would have written for a v2 item.
Pure functions.

Checked against the binary (tests/data/storage/codex_0169, tests/data/storage/codex_items): UserMessage
(text with elements, image, local_image, skill, mention), AgentMessage (with phase), Reasoning (summary
and raw content), Plan, CommandExecution (read/list_files/search/unknown actions, completed and failed),
DynamicToolCall, CollabAgentToolCall (spawn, wait), FileChange (add, delete, update, update with move),
WebSearch, ImageView, McpToolCall (completed, failed), ContextCompaction. The other variants (HookPrompt,
SubAgentActivity, Sleep, ImageGeneration) follow Codex's source. Casing is per struct and not always the
source's: 0.169 writes CommandExecution, DynamicToolCall and CollabAgentToolCall in snake_case (the source
says camelCase) but McpToolCall in camelCase (`readOnlyHint`); the unrecorded SubAgentActivity is taken as
snake_case.

v2 -> core -> v2 is the identity except for these (the caller keeps the v2 item as an extra to keep them):

=====================  ========================================================================
v2 type                lost on the way through the core item (:data:`LOST_FIELDS`)
=====================  ========================================================================
userMessage            `audio` inputs and an image's `file_id` (no core form); 0.169 drops them
agentMessage           moderation, delivery, questions
commandExecution       pluginId, scriptPath; aggregatedOutput "" comes back null; `command` comes
                       back quoted the way Codex quotes argv (shlex crate), not as it was written
fileChange             the order of `changes` (Codex lists them sorted by path)
mcpToolCall            mcpAppUi
webSearch              results; a null action comes back as {"type": "other"}
subAgentActivity       model, reasoningEffort
imageGeneration        failure, generationId, inputImages, transparentBackground
=====================  ========================================================================

Lossless: hookPrompt, plan, reasoning, dynamicToolCall, collabAgentToolCall, imageView, sleep,
contextCompaction. No core variant (core_from_v2 gives None): enteredReviewMode, exitedReviewMode,
functionCallOutput.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app_server.store import codex_item_fields as fields
from pycodex.json_types import JsonObj, JsonValue

__all__ = [
    "CORE_TYPES",
    "LOST_FIELDS",
    "MAPPED_V2_TYPES",
    "core_from_v2",
    "v2_from_core",
]

#: The v2 fields a core item cannot carry, by v2 type (the docstring's table; the tests hold us to it).
LOST_FIELDS: dict[str, tuple[str, ...]] = {
    "agentMessage": ("moderation", "delivery", "questions"),
    "commandExecution": ("pluginId", "scriptPath"),
    "mcpToolCall": ("mcpAppUi",),
    "webSearch": ("results",),
    "subAgentActivity": ("model", "reasoningEffort"),
    "imageGeneration": ("failure", "generationId", "inputImages", "transparentBackground"),
}

# ---- the variants ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Variant:
    """One core variant and its v2 type: fields mapped one to one (`spec`), plus what needs code (`extra_*`).

    `spec` lists fields as `v2key[=core_key][:how]` (core key: the v2 key when not given); how is nothing
    (the same value), "enum" (camelCase in v2, snake_case in core), "ms" (durationMs <-> duration), "uri"
    (path <-> file URI), "list" (a list core may omit), "req" (written to core even when null) or "v2" (v2
    only: null from core, lost towards it). Core skips its unset options: a null v2 value is not written."""

    v2: str
    core: str
    spec: str
    extra_from_core: Callable[[JsonObj], JsonObj] = lambda _core: {}
    extra_to_core: Callable[[JsonObj], JsonObj] = lambda _item: {}

    @property
    def fields(self) -> list[tuple[str, str, str]]:
        """The spec's fields as (v2 key, core key, how)."""
        out = []
        for token in self.spec.split():
            keys, _, how = token.partition(":")
            v2, _, core = keys.partition("=")
            out.append((v2, core or v2, how))
        return out


_FROM_CORE_HOW: dict[str, Callable[[JsonValue], JsonValue]] = {"enum": fields.camel, "ms": fields.millis, "uri": fields.path}
_TO_CORE_HOW: dict[str, Callable[[JsonValue], JsonValue]] = {"enum": fields.snake, "ms": fields.duration, "uri": fields.uri}


def _from_core_value(value: JsonValue, how: str) -> JsonValue:
    if how == "list":
        return [] if value is None else value
    if value is None or how == "v2":
        return None
    convert = _FROM_CORE_HOW.get(how)
    return value if convert is None else convert(value)


def _to_core_value(value: JsonValue, how: str) -> JsonValue:
    convert = _TO_CORE_HOW.get(how)
    return value if convert is None else convert(value)


_VARIANTS = (
    _Variant(
        "userMessage",
        "UserMessage",
        "id clientId=client_id",
        lambda c: {"content": [fields.input_from_core(e) for e in c["content"]]},
        fields.user_extra_to_core,
    ),
    _Variant("hookPrompt", "HookPrompt", "id fragments:list"),
    _Variant(
        "agentMessage",
        "AgentMessage",
        "moderation:v2 id phase delivery:v2 questions:v2",
        lambda c: {
            "text": "".join(part.get("text", "") for part in c["content"]),
            "memoryCitation": fields.citation_from_core(c.get("memory_citation")),
        },
        lambda v: {
            "content": [{"type": "Text", "text": v["text"]}],
            **fields.citation_to_core(v.get("memoryCitation")),
        },
    ),
    _Variant("plan", "Plan", "id text"),
    _Variant(
        "reasoning",
        "Reasoning",
        "id summary=summary_text:list content=raw_content:list",
    ),
    _Variant(
        "commandExecution",
        "CommandExecution",
        "id pluginId:v2 scriptPath:v2 processId=process_id source:enum status:enum exitCode=exit_code"
        " durationMs=duration:ms",
        fields.command_extra_from_core,
        fields.command_extra_to_core,
    ),
    # 0.169 writes DynamicToolCall and CollabAgentToolCall in snake_case, enum values too (`spawn_agent`,
    # `pending_init`), but McpToolCall in camelCase (all recorded). SubAgentActivity is taken as snake_case.
    _Variant(
        "dynamicToolCall",
        "DynamicToolCall",
        "id namespace tool arguments:req status:enum contentItems=content_items success"
        " durationMs=duration:ms",
    ),
    _Variant(
        "collabAgentToolCall",
        "CollabAgentToolCall",
        "id tool:enum status:enum senderThreadId=sender_thread_id receiverThreadIds=receiver_thread_ids:list"
        " prompt model reasoningEffort=reasoning_effort",
        lambda c: {
            "agentsStates": {t: fields.agent_state_from_core(s) for t, s in c.get("agents_states", {}).items()}
        },
        # The sub-agents' nicknames (receiver_agents) are not in v2.
        lambda v: {
            "receiver_agents": [],
            "agents_states": {t: fields.agent_state_to_core(s) for t, s in v["agentsStates"].items()},
        },
    ),
    _Variant(
        "subAgentActivity",
        "SubAgentActivity",
        "id kind:enum agentThreadId=agent_thread_id agentPath=agent_path model:v2 reasoningEffort:v2",
    ),
    _Variant(
        "webSearch",
        "WebSearch",
        "id query results:v2",
        lambda c: {"action": fields.search_action_from_core(c["action"])},
        lambda v: {"action": fields.search_action_to_core(v.get("action"))},
    ),
    _Variant("imageView", "ImageView", "id path:uri"),
    _Variant("sleep", "Sleep", "id durationMs=duration_ms"),
    _Variant(
        "imageGeneration",
        "ImageGeneration",
        "id status revisedPrompt=revised_prompt transparentBackground:v2 failure:v2 generationId:v2",
        # v2 does not carry the image itself (core `result`, base64): the saved file is where it lives.
        fields.saved_path,
        lambda v: {"result": "", **fields.some(saved_path=v.get("savedPath"))},
    ),
    _Variant(
        "fileChange",
        "FileChange",
        "id",
        lambda c: {"changes": fields.changes_from_core(c["changes"]), "status": c.get("status") or "inProgress"},
        # Core PatchApplyStatus has no in-progress value: an unfinished change has none.
        lambda v: {
            "changes": fields.changes_to_core(v["changes"]),
            **fields.some(status=None if v["status"] == "inProgress" else v["status"]),
        },
    ),
    _Variant(
        "mcpToolCall",
        "McpToolCall",
        "id server tool status arguments:req mcpAppUi:v2 pluginId readOnlyHint error durationMs=duration:ms",
        fields.mcp_extra_from_core,
        fields.mcp_extra_to_core,
    ),
    _Variant("contextCompaction", "ContextCompaction", "id"),
)
_BY_CORE = {variant.core: variant for variant in _VARIANTS}
_BY_V2 = {variant.v2: variant for variant in _VARIANTS}

#: The core TurnItem types of Codex 0.169, and the v2 types that have one.
CORE_TYPES: tuple[str, ...] = tuple(_BY_CORE)
MAPPED_V2_TYPES: tuple[str, ...] = tuple(_BY_V2)


def v2_from_core(core: JsonObj) -> JsonObj | None:
    """The v2 ThreadItem Codex 0.169's thread/read shows for a core TurnItem (None: not a core type we know).

    startedAtMs/completedAtMs are not part of it: they live on the rollout record, not the item."""
    variant = _BY_CORE.get(str(core.get("type")))
    if variant is None:
        return None
    item: JsonObj = {"type": variant.v2}
    item.update({v2: _from_core_value(core.get(key), how) for v2, key, how in variant.fields})
    return item | variant.extra_from_core(core)


def core_from_v2(item: JsonObj) -> JsonObj | None:
    """The core TurnItem Codex 0.169 writes for a v2 ThreadItem (None: Codex has no core variant for it).

    The v2 fields listed in :data:`LOST_FIELDS` (and the few value changes the module docstring lists) do not
    survive; startedAtMs/completedAtMs are ignored (they belong on the record)."""
    variant = _BY_V2.get(str(item.get("type")))
    if variant is None:
        return None
    core: JsonObj = {"type": variant.core}
    for v2, key, how in variant.fields:
        value = item.get(v2)
        if how != "v2" and (value is not None or how == "req"):
            core[key] = _to_core_value(value, how)
    return core | variant.extra_to_core(item)
