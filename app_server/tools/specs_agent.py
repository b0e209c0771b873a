"""JSON specs of the tools beyond the shell: user questions, images, goals, apply_patch, hosted tools.

Names, types and parameter shapes follow what Codex 0.169 sends (tests/data/tools/codex_0169_tools.json,
recorded by scripts/capture_tool_specs.py); the descriptions and the patch grammar's text are our own.
The grammar accepts the same language as Codex's (apply_patch's parser is the judge of what applies).
"""

from __future__ import annotations

from pycodex.json_types import JsonObj

__all__ = [
    "APPLY_PATCH_FREEFORM",
    "APPLY_PATCH_FUNCTION",
    "CREATE_GOAL",
    "GET_GOAL",
    "PATCH_GRAMMAR",
    "REQUEST_USER_INPUT",
    "TOOL_SEARCH",
    "UPDATE_GOAL",
    "VIEW_IMAGE",
    "web_search",
]


def _function(name: str, description: str, properties: JsonObj, required: list[str]) -> JsonObj:
    return {
        "type": "function",
        "name": name,
        "description": description,
        "strict": False,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False},
    }


_OPTION: JsonObj = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "description": "What choosing this option means, in one sentence."},
        "label": {"type": "string", "description": "The option's short label (a few words)."},
    },
    "required": ["label", "description"],
    "additionalProperties": False,
}

_QUESTION: JsonObj = {
    "type": "object",
    "properties": {
        "header": {"type": "string", "description": "A short title shown above the question (12 characters or so)."},
        "id": {"type": "string", "description": "A stable snake_case id; the answer is keyed by it."},
        "options": {"type": "array", "description": "Two or three choices, the recommended one first. The user "
                    "can always answer in their own words instead.", "items": _OPTION},
        "question": {"type": "string", "description": "The question itself, in one sentence."},
    },
    "required": ["id", "header", "question", "options"],
    "additionalProperties": False,
}

REQUEST_USER_INPUT = _function(
    "request_user_input",
    "Ask the user one to three short questions and wait for the answers. Use it only when a choice is "
    "truly the user's to make and cannot be settled from the workspace.",
    {"questions": {"type": "array", "description": "The questions, asked together.", "items": _QUESTION}},
    ["questions"],
)

VIEW_IMAGE = _function(
    "view_image",
    "Look at an image file from the workspace (PNG, JPEG, GIF or WebP): it is attached to the conversation "
    "so that you can see it.",
    {"path": {"type": "string", "description": "The image file's path, absolute or relative to the cwd."}},
    ["path"],
)

GET_GOAL = _function("get_goal", "Read the thread's current goal: its objective, status and token budget.", {}, [])

CREATE_GOAL = _function(
    "create_goal",
    "Start working towards a goal, only when the user or the instructions ask for one. Fails while an "
    "unfinished goal exists.",
    {
        "objective": {"type": "string", "description": "What is to be achieved, concretely."},
        "token_budget": {"type": "integer", "description": "A token budget, only when one was asked for."},
    },
    ["objective"],
)

UPDATE_GOAL = _function(
    "update_goal",
    "Change the current goal's status: complete once it is achieved, blocked when it cannot go on without "
    "the user, paused to set it aside.",
    {"status": {"type": "string", "enum": ["complete", "blocked", "paused"],
                "description": "The goal's new status."}},
    ["status"],
)

#: The patch language in Lark syntax. Same language as Codex's grammar, written independently.
PATCH_GRAMMAR = r"""start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"""

_PATCH_HELP = (
    "Edit files with a patch. Send the patch text itself (not JSON): it starts with `*** Begin Patch` and "
    "ends with `*** End Patch`. Each file is one section: `*** Add File: PATH` followed by `+` lines; "
    "`*** Delete File: PATH`; or `*** Update File: PATH`, optionally `*** Move to: NEWPATH`, then hunks. A "
    "hunk starts with `@@` (optionally followed by a line that locates it, such as a function header) and "
    "lists lines prefixed with ` ` (context, about three lines either side), `-` (removed) or `+` (added). "
    "`*** End of File` marks a hunk that ends at the file's end. Paths are relative to the cwd; never "
    "absolute."
)

APPLY_PATCH_FREEFORM: JsonObj = {
    "type": "custom",
    "name": "apply_patch",
    "description": _PATCH_HELP,
    "format": {"type": "grammar", "syntax": "lark", "definition": PATCH_GRAMMAR},
}

APPLY_PATCH_FUNCTION = _function(
    "apply_patch", _PATCH_HELP,
    {"input": {"type": "string", "description": "The whole patch, from `*** Begin Patch` to `*** End Patch`."}},
    ["input"],
)

TOOL_SEARCH: JsonObj = {
    "type": "tool_search",
    "execution": "client",
    "description": "Find tools that are available but not listed (MCP servers, plugins) by what they do; the "
    "matches become callable.",
    "parameters": {
        "type": "object",
        "properties": {
            "limit": {"type": "number", "description": "At most this many tools (default 8)."},
            "query": {"type": "string", "description": "Words describing the tool you need."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
}


def web_search(*, live: bool, content_types: bool) -> JsonObj:
    """The hosted web search tool: ``live`` lets it reach the web (else cached results only)."""
    spec: JsonObj = {"type": "web_search", "external_web_access": live}
    if content_types:
        spec["search_content_types"] = ["text", "image"]
    return spec
