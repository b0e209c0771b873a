"""What exec and wait tell the model, and what a script gets back from a nested tool call.

The model's copy of a cell's result (observed on Codex 0.169)::

    Script completed | Script failed | Script running with cell ID <id> | Script terminated
    Wall time <seconds, 1 decimal> seconds
    Output:

That header is the first ``input_text`` item, each ``text()``/``image()`` of the script one more item, and a
failed script's error a last ``Script error:\\n<error>`` item. With nothing but the header the output is that
string alone. The text items share the ``max_output_tokens`` budget, cut as command output is.

A nested call's result is what Codex hands the script: exec_command and write_stdin give an object
(``chunk_id``, ``wall_time_seconds``, ``exit_code`` or ``session_id``, ``original_token_count``,
``output``), view_image ``{image_url}``, the goal tools their JSON object, apply_patch its text. A call the
tool refused rejects the script's promise with the tool's text.
"""

from __future__ import annotations

import json
import re

from app_server.tools.code_mode.cells import CellOutput, NestedToolError
from app_server.truncation import TruncationPolicy, approx_token_count, formatted_truncate_text
from pycodex.json_types import JsonObj, JsonValue

__all__ = ["cell_result", "failed_result", "nested_result", "parse_exec_text"]

_EXEC_HEADER = re.compile(
    r"\AChunk ID: (?P<chunk>\S+)\nWall time: (?P<wall>[0-9.]+) seconds\n"
    r"(?:Process exited with code (?P<code>-?\d+)\n|Process running with session ID (?P<session>\d+)\n)?"
    r"Original token count: (?P<tokens>\d+)\nOutput:\n"
)


def parse_exec_text(text: str) -> JsonObj | None:
    """The object form of an exec_command/write_stdin result text (None when it is not one: a refusal)."""
    match = _EXEC_HEADER.match(text)
    if match is None:
        return None
    result: JsonObj = {"chunk_id": match["chunk"], "wall_time_seconds": float(match["wall"])}
    if match["code"] is not None:
        result["exit_code"] = int(match["code"])
    elif match["session"] is not None:
        result["session_id"] = int(match["session"])
    result["original_token_count"] = int(match["tokens"])
    result["output"] = text[match.end():]
    return result


def _text_of(output: JsonValue) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(p.get("text")) for p in output if isinstance(p, dict) and p.get("type") == "input_text")
    return json.dumps(output)


def nested_result(name: str, item: JsonObj) -> JsonValue:
    """What the script's ``tools.<name>(...)`` resolves to, from the tool's output item (see the module doc)."""
    output = item.get("output")
    if name in ("exec_command", "write_stdin"):
        parsed = parse_exec_text(_text_of(output))
        if parsed is None:
            raise NestedToolError(_text_of(output))
        return parsed
    if name == "view_image":
        images = [p for p in output if isinstance(p, dict) and p.get("type") == "input_image"] \
            if isinstance(output, list) else []
        if not images:
            raise NestedToolError(_text_of(output))
        return {"image_url": images[0].get("image_url")}
    if name in ("get_goal", "create_goal", "update_goal"):
        text = _text_of(output)
        try:
            value: JsonValue = json.loads(text)
        except ValueError:
            raise NestedToolError(text) from None
        if not isinstance(value, dict):
            raise NestedToolError(text)
        return value
    return _text_of(output)


def _header(out: CellOutput, cell_id: str, wall_s: float) -> str:
    state = f"running with cell ID {cell_id}" if out.status == "running" else out.status
    return f"Script {state}\nWall time {wall_s:.1f} seconds\nOutput:\n"


def _within_budget(items: list[JsonObj], max_tokens: int) -> list[JsonObj]:
    total = sum(approx_token_count(str(i["text"])) for i in items if i.get("type") == "input_text")
    if total <= max_tokens:
        return items
    left = max_tokens
    kept: list[JsonObj] = []
    for item in items:
        if item.get("type") != "input_text":
            kept.append(item)
            continue
        text = str(item["text"])
        kept.append({"type": "input_text", "text": formatted_truncate_text(text, TruncationPolicy.tokens(left))})
        left = max(left - approx_token_count(text), 0)
    return kept


def cell_result(out: CellOutput, cell_id: str, wall_s: float, max_tokens: int) -> JsonValue:
    """The ``output`` of the exec/wait call that reports ``out``: the header alone, or a list of items."""
    header = _header(out, cell_id, wall_s)
    items = _within_budget(out.items, max(max_tokens, 0))
    if out.status == "failed":
        items = [*items, {"type": "input_text", "text": f"Script error:\n{out.error}"}]
    if not items:
        return header
    return [{"type": "input_text", "text": header}, *items]


def failed_result(error: str) -> JsonValue:
    """A failure before any script ran (an unknown cell, no runtime), in the cell result's layout."""
    return cell_result(CellOutput("failed", [], error), "", 0.0, 0)
