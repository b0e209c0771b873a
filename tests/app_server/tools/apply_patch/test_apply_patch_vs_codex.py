"""Differential: the scenarios applied by Codex 0.169's own apply_patch and by our library.

The Codex binary acts as the standalone ``apply_patch`` when started under that name (arg0), with the
patch as its one argument, in the folder the paths are relative to. Both must leave the same files, and
give the same summary or the same error. The standalone prints parse errors in its own wording
("Invalid patch hunk on line N: ..."), which is mapped to the app-server's ("invalid hunk at line N, ...")
before comparing; the other errors are the same text.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.apply_patch_cases import SCENARIOS, Scenario, read_tree, run_ours, write_tree

pytestmark = pytest.mark.codex

CASES = [s for s in SCENARIOS if s.differential]


def _standalone_error(stderr: str) -> str:
    text = stderr.rstrip("\n")
    hunk = re.match(r"Invalid patch hunk on line (\d+): (.*)\Z", text, re.DOTALL)
    if hunk:
        return f"invalid hunk at line {hunk.group(1)}, {hunk.group(2)}"
    if text.startswith("Invalid patch: "):
        return "invalid patch: " + text[len("Invalid patch: ") :]
    return text


def _run_codex(codex_bin: Path, root: Path, patch: str, tool_dir: Path) -> subprocess.CompletedProcess[str]:
    link = tool_dir / "apply_patch"
    if not link.exists():
        link.symlink_to(codex_bin)
    return subprocess.run(
        [str(link), patch], cwd=root, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("case", CASES, ids=[s.name for s in CASES])
async def test_same_as_codex(case: Scenario, codex_bin: Path, tmp_path: Path) -> None:
    theirs_root, ours_root, tool_dir = tmp_path / "theirs", tmp_path / "ours", tmp_path / "bin"
    for folder in (theirs_root, ours_root, tool_dir):
        folder.mkdir()
    write_tree(theirs_root, case.before)
    write_tree(ours_root, case.before)

    done = _run_codex(codex_bin, theirs_root, case.patch, tool_dir)
    summary, error = await run_ours(ours_root, case.patch)

    assert read_tree(ours_root) == read_tree(theirs_root)
    if done.returncode == 0:
        assert error is None, error
        assert summary == done.stdout
    else:
        assert summary is None
        theirs = _standalone_error(done.stderr).replace(str(theirs_root), "{root}")
        assert error is not None
        assert error.replace(str(ours_root), "{root}") == theirs
