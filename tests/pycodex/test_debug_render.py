"""Thread rendering for `threads show` / `export --format md`: every item kind has a readable line."""

from __future__ import annotations

from pycodex.debug.render import OUTPUT_LINES, item_summary, thread_markdown


def test_items_render_as_label_and_body() -> None:
    assert item_summary({"type": "userMessage", "content": [{"type": "text", "text": "hi"}, {"type": "image"}]}) \
        == ("user", "hi\n[image]")
    assert item_summary({"type": "fileChange", "status": "completed", "changes": [
        {"path": "a.py", "kind": {"type": "update", "move_path": None}}, {"path": "b.py", "kind": {"type": "add"}}]}) \
        == ("patch", "update a.py, add b.py [completed]")
    assert item_summary({"type": "mcpToolCall", "server": "docs", "tool": "search", "status": "failed"}) \
        == ("tool", "docs/search [failed]")
    label, body = item_summary({"type": "commandExecution", "command": "ls", "status": "completed", "exitCode": 2,
                                "durationMs": 12, "aggregatedOutput": "x\n" * (OUTPUT_LINES + 5)})
    assert label == "command" and body.startswith("$ ls  [completed, exit 2, 12 ms]\nx\n")
    assert body.endswith("... (5 more lines)")
    assert item_summary({"type": "webSearch", "id": "w", "query": "q"}) == ("webSearch", '{"query": "q"}')


def test_markdown_names_failed_turns_and_their_error() -> None:
    thread = {"id": "t1", "cwd": "/w", "createdAt": 0, "turns": [
        {"id": "u1", "status": "failed", "durationMs": 1500, "error": {"message": "stream disconnected"},
         "items": [{"type": "agentMessage", "text": "partial"}]}]}
    text = thread_markdown(thread)
    assert "## turn u1 (failed, 1.5 s) - error: stream disconnected" in text
    assert "- cwd: `/w`" in text and "created" in text and "**assistant**: partial" in text
