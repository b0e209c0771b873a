"""Code mode's result shapes: the nested exec_command object is read back from the one exec output format,
and cell results are laid out as Codex 0.169 lays them out."""

from __future__ import annotations

import pytest

from app_server.tools.code_mode.cells import CellOutput, NestedToolError
from app_server.tools.code_mode.results import cell_result, nested_result, parse_exec_text
from app_server.tools.code_mode.specs import ts_declaration
from app_server.tools.output import CollectedOutput, format_exec_output
from app_server.tools.specs import EXEC_COMMAND


@pytest.mark.parametrize(("exit_code", "session_id"), [(0, None), (3, None), (None, 4308)])
def test_the_exec_text_reads_back_as_codex_s_object(exit_code: int | None, session_id: int | None) -> None:
    text = format_exec_output(output=CollectedOutput(b"hi\nthere\n", 9, 0), wall_time_s=0.25,
                              exit_code=exit_code, session_id=session_id, max_output_tokens=None)
    parsed = parse_exec_text(text)
    assert parsed is not None
    status = {"exit_code": exit_code} if exit_code is not None else {"session_id": session_id}
    assert list(parsed) == ["chunk_id", "wall_time_seconds", *status, "original_token_count", "output"]
    assert {k: parsed[k] for k in ("wall_time_seconds", *status, "original_token_count", "output")} == {
        "wall_time_seconds": 0.25, **status, "original_token_count": 3, "output": "hi\nthere\n"}


def test_a_refusal_rejects_the_script_s_promise() -> None:
    with pytest.raises(NestedToolError, match=r"^exec_command is not allowed$"):
        nested_result("exec_command", {"type": "function_call_output", "output": "exec_command is not allowed"})
    with pytest.raises(NestedToolError, match="unable to locate"):
        nested_result("view_image", {"output": "unable to locate image"})
    assert nested_result("view_image", {"output": [{"type": "input_image", "image_url": "data:x"}]}) == {
        "image_url": "data:x"}
    assert nested_result("get_goal", {"output": '{"goal":null}'}) == {"goal": None}


def test_a_header_alone_is_a_string_and_items_follow_the_header() -> None:
    assert cell_result(CellOutput("running", []), "7", 0.31, 100) == (
        "Script running with cell ID 7\nWall time 0.3 seconds\nOutput:\n")
    assert cell_result(CellOutput("failed", [{"type": "input_text", "text": "a"}], "Error: x"), "1", 1.0, 100) == [
        {"type": "input_text", "text": "Script failed\nWall time 1.0 seconds\nOutput:\n"},
        {"type": "input_text", "text": "a"}, {"type": "input_text", "text": "Script error:\nError: x"}]


def test_a_script_sees_each_tool_as_a_typescript_declaration() -> None:
    declared = ts_declaration(EXEC_COMMAND)
    assert declared.startswith("declare const tools: { exec_command(args: { cmd: string; justification?: string;")
    assert 'sandbox_permissions?: "use_default" | "require_escalated";' in declared
    assert "prefix_rule?: Array<string>;" in declared
    assert declared.endswith("Promise<{ chunk_id?: string; exit_code?: number; original_token_count?: number; "
                             "output: string; session_id?: number; wall_time_seconds: number; }>; };")
