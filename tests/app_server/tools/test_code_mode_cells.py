"""code_mode.cells on its own: a cell's bounds (held output, lifetime) and the thread's teardown."""

from __future__ import annotations

import shutil

import pytest

from app_server.tools.code_mode import cells
from app_server.tools.code_mode.cells import CodeCells, NestedToolError
from pycodex.json_types import JsonValue

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="cells run on node")


async def _echo(name: str, value: JsonValue) -> JsonValue:
    if name == "fail":
        raise NestedToolError("it failed")
    return {"tool": name, "input": value}


async def test_nested_calls_resolve_and_reject_with_the_bridge_s_answers() -> None:
    code = CodeCells()
    source = ("const r = await tools.echo({a: 1}); text(r);\n"
              "try { await tools.fail('x'); } catch (e) { text(typeof e + ':' + e); }\nstore('k', [1]);")
    cell = await code.start(source, [{"name": "echo", "description": ""}, {"name": "fail", "description": ""}], _echo)
    out = await cell.next_output(30)
    assert (out.status, [i["text"] for i in out.items]) == (
        "completed", ['{"tool":"echo","input":{"a":1}}', "string:it failed"])
    assert code.stored == {"k": [1]}
    await cell.terminate()  # waits for the process and its pipes


async def test_a_flood_of_output_is_held_to_its_bound() -> None:
    code = CodeCells()
    cell = await code.start("for (let i = 0; i < 3000; i++) text('x'.repeat(1000));", [], _echo)
    out = await cell.next_output(30)
    kept = cells.HELD_BYTES // 1000
    assert out.error is None, out.error
    assert out.status == "completed" and len(out.items) == kept + 1
    assert out.items[-1]["text"].startswith(f"[{3000 - kept} more output items were dropped")
    await cell.terminate()


async def test_a_cell_that_runs_too_long_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cells, "CELL_MAX_S", 0.2)
    cell = await CodeCells().start("await new Promise(() => {});", [], _echo)
    out = await cell.next_output(30)
    assert out.status == "failed" and out.error is not None and "was stopped" in out.error
    await cell.terminate()


async def test_closing_the_thread_ends_its_running_cells() -> None:
    code = CodeCells()
    cell = await code.start("text('a'); yield_control(); await new Promise(() => {});", [], _echo)
    assert (await cell.next_output(30)).status == "running"
    await code.close_all()
    assert cell.done and code.get(cell.id) is None
    assert (await cell.next_output(0)).status == "terminated"
