"""JSON specs of the function tools offered to the model (parameter names and types as Codex uses).

The descriptions are pycodex's own words.
"""

from __future__ import annotations

from pycodex.json_types import JsonObj

__all__ = ["EXEC_COMMAND", "WRITE_STDIN", "tool_specs"]

_MAX_OUTPUT = {
    "type": "number",
    "description": "Upper bound on returned output, in tokens (about 4 bytes each). Default 10000.",
}

EXEC_COMMAND: JsonObj = {
    "type": "function",
    "name": "exec_command",
    "description": "Start a shell command in the workspace. Returns its output once it exits, or, if it is "
    "still running when the wait ends, the output so far and a session id for write_stdin.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {
            "cmd": {"type": "string", "description": "The command line, run by the shell."},
            "justification": {
                "type": "string",
                "description": "One sentence shown to the user when asking to run outside the sandbox; "
                "only with sandbox_permissions = require_escalated.",
            },
            "login": {
                "type": "boolean",
                "description": "Run the shell as a login shell (reads profile files). Default true.",
            },
            "max_output_tokens": _MAX_OUTPUT,
            "prefix_rule": {
                "type": "array",
                "description": "With require_escalated: a command prefix the user may approve once for all "
                "later commands that start with it, e.g. [\"npm\", \"test\"].",
                "items": {"type": "string"},
            },
            "sandbox_permissions": {
                "type": "string",
                "description": "use_default runs inside the sandbox; require_escalated asks the user to run "
                "this command without it.",
                "enum": ["use_default", "require_escalated"],
            },
            "shell": {"type": "string", "description": "Shell to use instead of the default (bash)."},
            "tty": {
                "type": "boolean",
                "description": "Give the command a pseudo-terminal (for interactive programs). Default false.",
            },
            "workdir": {
                "type": "string",
                "description": "Directory to run in; relative paths start at the turn's cwd. Default: the cwd.",
            },
            "yield_time_ms": {
                "type": "number",
                "description": "How long to wait for the command before returning, in ms (250 to 30000, "
                "default 10000).",
            },
        },
        "required": ["cmd"],
        "additionalProperties": False,
    },
}

WRITE_STDIN: JsonObj = {
    "type": "function",
    "name": "write_stdin",
    "description": "Send characters to a command started by exec_command that is still running, then return "
    "the output it produced since the last call. Send no characters to just collect output.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {
            "chars": {"type": "string", "description": "Characters to write to the command's input. Default ''."},
            "max_output_tokens": _MAX_OUTPUT,
            "session_id": {"type": "number", "description": "The session id exec_command returned."},
            "yield_time_ms": {
                "type": "number",
                "description": "How long to wait for output before returning, in ms (default 250 after a "
                "write, longer when only polling).",
            },
        },
        "required": ["session_id"],
        "additionalProperties": False,
    },
}


def tool_specs() -> list[JsonObj]:
    """The specs of the command tools offered to the model (exec_command, write_stdin)."""
    return [EXEC_COMMAND, WRITE_STDIN]
