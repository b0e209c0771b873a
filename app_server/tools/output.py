"""The text a command's result becomes for the model (``function_call_output.output``).

Format, as Codex sends it (app_server.md §8)::

    Chunk ID: <hex6>
    Wall time: <seconds> seconds
    Process exited with code <n>          | Process running with session ID <id>
    Original token count: <n>
    Output:
    [Warning: truncated output (original token count: <n>)
    Total output lines: <n>
    <blank line>]
    <text, middle-truncated to max_output_tokens>
"""

from __future__ import annotations

import secrets

__all__ = ["DEFAULT_MAX_OUTPUT_TOKENS", "approx_tokens", "format_exec_output", "truncate_middle"]

DEFAULT_MAX_OUTPUT_TOKENS = 10_000
_BYTES_PER_TOKEN = 4


def approx_tokens(text: str) -> int:
    return (len(text.encode("utf-8")) + _BYTES_PER_TOKEN - 1) // _BYTES_PER_TOKEN


def truncate_middle(text: str, max_tokens: int) -> str:
    """Keep the head and tail of ``text`` within ``max_tokens``, marking what was cut."""
    budget = max(max_tokens, 0) * _BYTES_PER_TOKEN
    data = text.encode("utf-8")
    if len(data) <= budget:
        return text
    head = data[: budget // 2].decode("utf-8", "ignore")
    tail = data[len(data) - budget // 2 :].decode("utf-8", "ignore") if budget else ""
    removed = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    cut = (removed + _BYTES_PER_TOKEN - 1) // _BYTES_PER_TOKEN
    return f"{head}…{cut} tokens truncated…{tail}"


def format_exec_output(
    *,
    output: str,
    wall_time_s: float,
    exit_code: int | None,
    session_id: int | None,
    max_output_tokens: int | None,
) -> str:
    lines = [f"Chunk ID: {secrets.token_hex(3)}", f"Wall time: {wall_time_s:.4f} seconds"]
    if exit_code is not None:
        lines.append(f"Process exited with code {exit_code}")
    elif session_id is not None:
        lines.append(f"Process running with session ID {session_id}")
    lines.append(f"Original token count: {approx_tokens(output)}")
    limit = DEFAULT_MAX_OUTPUT_TOKENS if max_output_tokens is None else max_output_tokens
    lines.append("Output:")
    body = truncate_middle(output, limit)
    if body != output:  # Codex announces a cut before the text itself
        body = (f"Warning: truncated output (original token count: {approx_tokens(output)})\n"
                f"Total output lines: {len(output.splitlines())}\n\n{body}")
    return "\n".join(lines) + "\n" + body
