"""What the model sees of MCP tools, and what it gets back.

Codex 0.169 offers each server's tools as one Responses tool `{"type": "namespace", "name": "mcp__<server>",
"description": "Tools in the mcp__<server> namespace.", "tools": [function, ...]}` (functions sorted by name,
`strict: false`, input schemas reduced to the JSON-schema subset the Responses API takes); a call comes
back as a `function_call` with `"namespace": "mcp__<server>"`. Recorded in tests/data/mcp/codex_0169_calc.json
by scripts/capture_mcp_tool_spec.py.

The output of a call: with `structuredContent`, one string "Wall time: S seconds\\nOutput:\\n<compact JSON>";
otherwise a list of content items, a "Wall time: S seconds\\nOutput:" text item first. A refused or failed
call that never produced a result carries its error text as the one item after the header.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mcp.types import CallToolResult, ContentBlock, ImageContent, TextContent, Tool

from pycodex.json_types import JsonObj, JsonValue

NAMESPACE_PREFIX = "mcp__"
MAX_NAME_LENGTH = 64

_DISALLOWED = re.compile(r"[^A-Za-z0-9_]")
# JSON-schema keys Codex keeps in function parameters (recorded: title and default go, $ref/$defs stay).
_SCHEMA_KEYS = frozenset({"type", "description", "properties", "required", "items", "enum", "anyOf",
                          "additionalProperties", "const", "$ref", "$defs", "definitions"})
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions"})  # name -> schema


def sanitize_name(name: str) -> str:
    """Codex's rule for names the model sees: anything outside `[A-Za-z0-9_]` becomes `_`; at most 64
    characters, a long name keeping its head and ending in the SHA-1 of the original."""
    clean = _DISALLOWED.sub("_", name) or "_"
    if len(clean) > MAX_NAME_LENGTH:
        digest = hashlib.sha1(name.encode("utf-8")).hexdigest()
        clean = clean[: MAX_NAME_LENGTH - len(digest)] + digest
    return clean


def namespace_for(server: str) -> str:
    """The model-facing tool namespace of ``server`` (``mcp__<server>``, sanitized)."""
    return sanitize_name(NAMESPACE_PREFIX + server)


def _schema(node: object) -> JsonValue:
    if isinstance(node, list):
        return [_schema(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    out: JsonObj = {}
    for key, value in node.items():
        if key not in _SCHEMA_KEYS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: _schema(prop) for name, prop in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = _schema(value)
        else:
            out[key] = value
    return out


def parameters_schema(input_schema: Mapping[str, object]) -> JsonObj:
    """A tool's `inputSchema` as Codex sends it: an object schema that always has `properties`."""
    reduced = _schema(input_schema)
    reduced["type"] = "object"
    reduced.setdefault("properties", {})
    ordered: JsonObj = {"type": "object", "properties": reduced.pop("properties")}
    ordered.update({k: v for k, v in reduced.items() if k != "type"})
    return ordered


def function_spec(tool: Tool) -> JsonObj:
    """The model's function spec of one MCP tool (sanitized name, description, reduced parameters schema)."""
    return {"type": "function", "name": sanitize_name(tool.name), "description": tool.description or "",
            "strict": False, "parameters": parameters_schema(tool.inputSchema)}


def namespace_spec(server: str, tools: Iterable[Tool]) -> JsonObj | None:
    """The `namespace` tool for one server's (already filtered) tools; None when it has none."""
    functions = sorted((function_spec(tool) for tool in tools), key=lambda spec: spec["name"])
    if not functions:
        return None
    name = namespace_for(server)
    return {"type": "namespace", "name": name, "description": f"Tools in the {name} namespace.",
            "tools": functions}


def deferred_spec(server: str, tool: Tool) -> JsonObj:
    """One tool as tool_search hands it out while MCP tools are deferred: a one-function namespace (results of
    one server are merged later), the function marked ``defer_loading`` (recorded in
    tests/data/tools/codex_0169_tool_search.json)."""
    name = namespace_for(server)
    return {"type": "namespace", "name": name, "description": f"Tools in the {name} namespace.",
            "tools": [{**function_spec(tool), "defer_loading": True}]}


def search_text(server: str, tool: Tool) -> str:
    """The words tool_search matches one MCP tool by, Codex's fields in Codex's order: the flat name
    (``mcp__<server>__<tool>``), the model-facing and the server's tool name, the server name, the title,
    the description and the input schema's property names (sorted)."""
    name = sanitize_name(tool.name)
    properties = tool.inputSchema.get("properties")
    keys = sorted(properties) if isinstance(properties, Mapping) else []
    parts = [f"{namespace_for(server)}__{name}", name, tool.name, server, tool.title or "", tool.description or "",
             *keys]
    return " ".join(part.strip() for part in parts if part.strip())


@dataclass(frozen=True)
class ToolRoute:
    """Which server and MCP tool a model call names."""

    server: str
    tool: str


class ToolRoutes:
    """Maps the model's (`namespace`, `name`) back to (server, MCP tool name)."""

    def __init__(self, catalog: Mapping[str, Iterable[Tool]]) -> None:
        self._routes: dict[tuple[str, str], ToolRoute] = {}
        for server, tools in catalog.items():
            namespace = namespace_for(server)
            for tool in tools:
                self._routes[(namespace, sanitize_name(tool.name))] = ToolRoute(server, tool.name)

    def resolve(self, namespace: str | None, name: str) -> ToolRoute | None:
        """The server tool the model's (``namespace``, ``name``) stands for, or None."""
        if namespace is None:
            return None
        return self._routes.get((namespace, name))


def parse_arguments(arguments: str) -> JsonObj | None:
    """The model's `arguments` string as the MCP call's arguments; "" means none. Raises ValueError."""
    if not arguments.strip():
        return None
    value = json.loads(arguments)
    if not isinstance(value, dict):
        raise ValueError("MCP tool arguments must be a JSON object")
    return value


def _header(wall_time_s: float) -> str:
    return f"Wall time: {wall_time_s:.4f} seconds\nOutput:"


def _content_item(block: ContentBlock) -> JsonObj:
    if isinstance(block, TextContent):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, ImageContent):
        return {"type": "input_image", "image_url": f"data:{block.mimeType};base64,{block.data}"}
    return {"type": "input_text", "text": json.dumps(block.model_dump(mode="json", by_alias=True, exclude_none=True),
                                                     separators=(",", ":"))}


def call_output(result: CallToolResult, wall_time_s: float) -> str | list[JsonObj]:
    """`function_call_output.output` for a call that returned `result`."""
    if result.structuredContent is not None:
        body = json.dumps(result.structuredContent, separators=(",", ":"), ensure_ascii=False)
        return f"{_header(wall_time_s)}\n{body}"
    return [{"type": "input_text", "text": _header(wall_time_s)}, *(_content_item(b) for b in result.content)]


def error_output(message: str, wall_time_s: float) -> list[JsonObj]:
    """`function_call_output.output` for a call refused or failed before any result."""
    return [{"type": "input_text", "text": _header(wall_time_s)}, {"type": "input_text", "text": message}]


def item_result(result: CallToolResult) -> JsonObj:
    """The `mcpToolCall` item's `result` (v2 wire shape: content, structuredContent, _meta)."""
    return {
        "content": [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in result.content],
        "structuredContent": result.structuredContent,
        "_meta": result.meta,
    }


def tool_call_item(call_id: str, route: ToolRoute, arguments: object, tool: Tool | None, *,
                   started_at_ms: int, result: CallToolResult | None = None, error: str | None = None,
                   completed_at_ms: int | None = None, duration_ms: int | None = None) -> JsonObj:
    """The v2 `mcpToolCall` thread item (id = the model's call_id), in progress until `completed_at_ms`.
    `duration_ms` is measured on a monotonic clock, so it need not equal the difference of the stamps."""
    done = completed_at_ms is not None
    annotations = tool.annotations if tool is not None else None
    return {
        "type": "mcpToolCall", "id": call_id, "server": route.server, "tool": route.tool,
        "status": item_status(result) if done else "inProgress",
        "arguments": arguments, "appContext": None, "mcpAppUi": None, "pluginId": None,
        "readOnlyHint": annotations.readOnlyHint if annotations is not None else None,
        "result": item_result(result) if result is not None else None,
        "error": {"message": error} if error is not None else None,
        "durationMs": duration_ms if done else None,
        "startedAtMs": started_at_ms, "completedAtMs": completed_at_ms,
    }


def item_status(result: CallToolResult | None) -> str:
    """"completed", or "failed" for `isError` results and calls without a result (Codex does the same)."""
    return "completed" if result is not None and not result.isError else "failed"
