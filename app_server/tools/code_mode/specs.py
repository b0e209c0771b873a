"""The ``additional_tools`` input item a code-mode model gets instead of a ``tools`` list.

Codex 0.169 drives every catalog model whose metadata has ``tool_mode = "code_mode_only"`` (all of them
but ``gpt-5.5``, read from the binary's bundled model metadata) in code mode: the request has no
``tools`` key, and the first input item is::

    {"type": "additional_tools", "id": "at_<uuid7>", "role": "developer",
     "tools": [{"type": "namespace", "name": "functions", "description": "", "tools": [...]}, ...]}

Models whose ``experimental_supported_tools`` (``EXPERIMENTAL_TOOLS``: the gpt-6 family) name ``clock`` get a
``clock`` namespace too (``sleep``; scripts also get ``clock__curr_time``: ``code_mode.clock``), and those
naming ``send_user_message_async`` get ``request_user_input_async`` in ``functions`` (``code_mode.ask_async``).

The ``functions`` namespace holds the freeform ``exec`` tool (a Lark grammar: an optional
``// @exec: {...}`` pragma line, then the JavaScript source), ``wait`` and ``request_user_input``. The
other tools (exec_command, apply_patch, ...) are not offered directly: scripts call them as
``tools.<name>(...)``, and exec's description declares them in TypeScript.

Held back until pycodex can run them (``HELD_BACK``, ``NESTED_HELD_BACK``), with what makes Codex add them
(its bundled metadata, observed per model in the recording):

* ``collaboration`` (sub-agents: spawn_agent, wait_agent, ...), for ``multi_agent_version`` v2 models;
* the nested MCP resource tools (list_mcp_resources, list_mcp_resource_templates, read_mcp_resource),
  for every code-mode model, and the nested ``multi_agent_v1__*`` tools of v1 models, which Codex lists in
  ``ALL_TOOLS`` but not in exec's description.

Skill tools and MCP server tools, which Codex would nest in exec as well, are held back too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from app_server.store import new_uuid7
from app_server.tools import specs, specs_agent
from pycodex.json_types import JsonObj, JsonValue

__all__ = [
    "ASK_ASYNC",
    "CLOCK",
    "CODE_MODE_OFF",
    "CURR_TIME",
    "EXEC_GRAMMAR",
    "EXPERIMENTAL_TOOLS",
    "HELD_BACK",
    "NESTED_HELD_BACK",
    "CodeModeTools",
    "additional_tools_item",
    "nested_specs",
    "request_input",
    "ts_declaration",
]

#: Catalog models whose metadata has no ``tool_mode`` (every other catalog model is ``code_mode_only``).
CODE_MODE_OFF = frozenset({"gpt-5.5"})

#: Top-level code-mode tools and namespaces Codex offers that pycodex leaves out until it can run them.
HELD_BACK = frozenset({"collaboration"})
#: Nested tools (``tools.<name>`` in a script) Codex offers that pycodex leaves out likewise.
NESTED_HELD_BACK = frozenset({"list_mcp_resource_templates", "list_mcp_resources", "read_mcp_resource"})

#: Codex's bundled ``experimental_supported_tools`` per catalog model (the others have none).
EXPERIMENTAL_TOOLS = {model: frozenset({"send_user_message_async", "clock"})
                      for model in ("gpt-6-astra", "gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-sol", "gpt-6-luna")}

#: The exec input language: an optional pragma line, then the source (the same language as Codex's).
EXEC_GRAMMAR = r"""
start: pragma_source | plain_source
pragma_source: PRAGMA_LINE NEWLINE SOURCE
plain_source: SOURCE

PRAGMA_LINE: /[ \t]*\/\/ @exec:[^\r\n]*/
NEWLINE: /\r?\n/
SOURCE: /[\s\S]+/
"""

_EXEC_HELP = """\
Run JavaScript that calls the tools below and reports back. The input is raw JavaScript source (no JSON \
wrapping, no markdown fences), evaluated as an ES module in a fresh sandboxed context: top-level `await` \
works; `import`, `require`, `process`, `console`, the file system and the network do not.
An optional first line `// @exec: {"yield_time_ms": N, "max_output_tokens": N}` sets how long exec waits \
before handing back a still-running script (default 30000 ms; continue it with `wait`) and the token \
budget of the result (default 10000).

Globals:
- `tools.<name>(input)`: call a tool (listed below); returns a promise of its result. Function tools take \
an object, freeform tools a string. A failing call rejects with the tool's error.
- `text(value)`: add a text item to the result (non-strings go through `JSON.stringify`).
- `image(urlOrItem)`: add an image item (a `data:` URL, or an object with `image_url`).
- `store(key, value)` / `load(key)`: keep a JSON value for later exec calls of this thread.
- `notify(value)`: send a text to the model at once, as an extra output of this call.
- `yield_control()`: hand the output so far back now; the script keeps running (see `wait`).
- `exit()`: end the script successfully right away.
- `setTimeout(fn, ms)` / `clearTimeout(id)`: timers; they do not keep the script alive.
- `ALL_TOOLS`: `{name, description}` of every tool below.
When the module finishes, the script ends and promises still pending are dropped."""

_WAIT = {
    "type": "function",
    "name": "wait",
    "description": "Continue a running exec script (one whose exec result said `Script running with cell ID "
    "N`): returns the output it produced since, or its final result. `terminate: true` stops it.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {
            "cell_id": {"type": "string", "description": "The cell ID exec reported."},
            "max_tokens": {"type": "number", "description": "Token budget of this result (default 10000)."},
            "terminate": {"type": "boolean", "description": "Stop the script instead of waiting for it."},
            "yield_time_ms": {"type": "number", "description": "How long to wait for it, in ms (default 10000)."},
        },
        "required": ["cell_id"],
        "additionalProperties": False,
    },
}


_SLEEP: JsonObj = {
    "type": "function",
    "name": "sleep",
    "description": "Wait for a while (up to 12 hours) and report how long the wait took. Input steered into the "
    "turn ends the wait early.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {"duration_ms": {"type": "number", "description": "How long to wait, in ms (1 to 43200000)."}},
        "required": ["duration_ms"],
        "additionalProperties": False,
    },
}

#: The ``clock`` namespace (its tools run in ``code_mode.clock``).
CLOCK: JsonObj = {"type": "namespace", "name": "clock", "description": "Waiting and telling the time.",
                  "tools": [_SLEEP]}

#: The nested clock tool (a script's ``tools.clock__curr_time({})``).
CURR_TIME: JsonObj = {
    "type": "function",
    "name": "clock__curr_time",
    "description": "The current time in UTC, as `YYYY-MM-DD HH:MM:SS UTC`.",
    "strict": False,
    "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
}


def nested_specs(*, shell: bool, view_image: bool, goals: bool, clock: bool = False) -> list[JsonObj]:
    """The tools a script may call: the top-level ones sorted by name, then the namespaced ones (as Codex)."""
    out: list[JsonObj] = [specs_agent.APPLY_PATCH_FREEFORM]
    if shell:
        out += specs.tool_specs()
    if view_image:
        out.append(specs_agent.VIEW_IMAGE)
    if goals:
        out += [specs_agent.GET_GOAL, specs_agent.CREATE_GOAL, specs_agent.UPDATE_GOAL]
    return sorted(out, key=lambda spec: str(spec["name"])) + ([CURR_TIME] if clock else [])


def _ts_type(schema: JsonValue) -> str:
    if not isinstance(schema, dict):
        return "unknown"
    if isinstance(schema.get("enum"), list):
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        return f"Array<{_ts_type(schema.get('items'))}>"
    if kind == "object":
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return "{}"
        required = schema.get("required") or []
        fields = [f"{k}{'' if k in required else '?'}: {_ts_type(v)};" for k, v in props.items()]
        return "{ " + " ".join(fields) + " }"
    return "unknown"


_EXEC_RESULT = ("{ chunk_id?: string; exit_code?: number; original_token_count?: number; output: string; "
                "session_id?: number; wall_time_seconds: number; }")
#: What the nested tools resolve to, where it is more than ``unknown`` (``results.nested_result``).
_RESULTS = {"exec_command": _EXEC_RESULT, "write_stdin": _EXEC_RESULT, "view_image": "{ image_url: string; }",
            "apply_patch": "string", "clock__curr_time": "{ current_time: string; }"}


def ts_declaration(spec: JsonObj) -> str:
    """How a script sees tool ``spec``: a TypeScript declaration of ``tools.<name>``."""
    arg = "input: string" if spec["type"] == "custom" else f"args: {_ts_type(spec.get('parameters'))}"
    result = _RESULTS.get(str(spec["name"]), "unknown")
    return f"declare const tools: {{ {spec['name']}({arg}): Promise<{result}>; }};"


def nested_description(spec: JsonObj) -> str:
    """A nested tool's description as ``ALL_TOOLS`` and exec's description show it."""
    return f"{spec['description']}\n\n```ts\n{ts_declaration(spec)}\n```"


def exec_spec(nested: list[JsonObj]) -> JsonObj:
    """The freeform ``exec`` tool, its description declaring the ``nested`` tools."""
    sections = [f"### `{spec['name']}`\n{nested_description(spec)}" for spec in nested]
    return {
        "type": "custom",
        "name": "exec",
        "description": "\n\n".join([_EXEC_HELP, *sections]),
        "format": {"type": "grammar", "syntax": "lark", "definition": EXEC_GRAMMAR},
    }


_ASK_QUESTION: JsonObj = {
    "type": "object",
    "properties": {
        "options": {"type": "array", "description": "Suggested answers, the recommended one first; the user may "
                    "also answer in their own words. Leave out for a free-text question.",
                    "items": {"type": "string"}, "minItems": 1},
        "title": {"type": "string", "description": "The whole question, with the context needed to answer it."},
    },
    "required": ["title"],
    "additionalProperties": False,
}

#: Ask without waiting: the questions are shown, the call returns at once, an answer comes as user input.
ASK_ASYNC: JsonObj = {
    "type": "function",
    "name": "request_user_input_async",
    "description": "Ask the user questions while you keep working: this returns at once, and the user's answer, "
    "if any, arrives later as a new user message. Only for information, preferences or approval you lack.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {"questions": {"type": "array", "description": "The questions, shown together in this order.",
                                     "items": _ASK_QUESTION, "minItems": 1}},
        "required": ["questions"],
        "additionalProperties": False,
    },
}


@dataclass(frozen=True, slots=True)
class CodeModeTools:
    """A code-mode model's tools: the ``additional_tools`` item it is sent, and what its scripts may call."""

    item: JsonObj
    nested: tuple[JsonObj, ...]

    def offers(self, namespace: str, name: str) -> bool:
        """Whether the item offers tool ``name`` in ``namespace`` (``functions`` for the top level)."""
        return any(ns.get("name") == namespace and any(t.get("name") == name for t in ns.get("tools", []))
                   for ns in self.item["tools"])


def additional_tools_item(nested: list[JsonObj], *, request_user_input: bool = True, clock: bool = False,
                          ask_async: bool = False) -> JsonObj:
    """The ``additional_tools`` input item (with a fresh ``at_`` id) for a script toolset of ``nested``."""
    functions: list[JsonValue] = [exec_spec(nested), _WAIT]
    if request_user_input:
        functions.append(specs_agent.REQUEST_USER_INPUT)
    if ask_async:
        functions.append(ASK_ASYNC)
    namespaces: list[JsonValue] = [{"type": "namespace", "name": "functions", "description": "", "tools": functions}]
    if clock:
        namespaces.append(CLOCK)
    return {"type": "additional_tools", "id": f"at_{new_uuid7()}", "role": "developer", "tools": namespaces}


def request_input(history: list[JsonObj], item: JsonObj | None) -> list[JsonObj]:
    """The request's ``input`` from ``history`` when the model's tools are ``item`` (None: direct tools).

    A new code-mode thread records the item first in its history. A thread whose model was switched
    mid-way (Codex's behaviour there is not recorded; this is pycodex's choice) still gets exactly the
    tools of its current model: the item is put first when the history lacks one, and dropped for a model
    with direct tools.
    """
    if item is None:
        if any(entry.get("type") == "additional_tools" for entry in history):
            return [entry for entry in history if entry.get("type") != "additional_tools"]
        return history
    if any(entry.get("type") == "additional_tools" for entry in history):
        return history
    return [item, *history]
