"""extract_heredoc_patch's accepted and refused forms, and plan_changes on a 5 MB file with 100 chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_server.tools.apply_patch import extract_heredoc_patch, parse_patch, plan_changes

BODY = "*** Begin Patch\n*** Add File: foo\n+hi\n*** End Patch"


def _script(prefix: str, suffix: str = "") -> str:
    return f"{prefix}apply_patch <<'PATCH'\n{BODY}\nPATCH{suffix}"


@pytest.mark.parametrize(
    ("cmd", "workdir"),
    [
        (_script(""), None),
        (f"applypatch <<EOF\n{BODY}\nEOF\n", None),
        (f'apply_patch <<"EOF"\n{BODY}\nEOF', None),
        (_script("cd foo && "), "foo"),
        (_script("cd 'foo bar' && "), "foo bar"),
        (_script('cd "foo bar" && '), "foo bar"),
        ("bash -lc " + "'" + _script("cd foo && ").replace("'", "'\\''") + "'", "foo"),
        ("/bin/zsh -c " + "'" + _script("").replace("'", "'\\''") + "'", None),
    ],
)
def test_recognised(cmd: str, workdir: str | None) -> None:
    assert extract_heredoc_patch(cmd) == (BODY, workdir)


@pytest.mark.parametrize(
    "cmd",
    [
        _script("cd foo; "),
        _script("cd bar || "),
        _script("cd bar | "),
        _script("echo foo && "),
        _script("cd foo && cd bar && "),
        _script("cd foo bar && "),
        _script("cd bar && ", " && echo done"),
        _script("echo foo; cd bar && "),
        f"apply_patch foo <<'PATCH'\n{BODY}\nPATCH",
        "ls -la",
    ],
)
def test_refused(cmd: str) -> None:
    assert extract_heredoc_patch(cmd) is None


async def test_a_big_file_with_many_chunks_applies_every_chunk() -> None:
    # Its speed is measured in bench/tools_bench.py (the patch-turn row), not here.
    lines = [f"line {i:07d} " + "x" * 40 for i in range(100_000)]
    text = "\n".join(lines) + "\n"
    body = ["*** Begin Patch", "*** Update File: big.txt"]
    for k in range(100):
        i = k * 1000 + 500
        body += ["@@", " " + lines[i - 1] + "  ", "-" + lines[i], f"+changed {k}", " " + lines[i + 1]]
    body.append("*** End Patch")

    async def read(_: Path) -> str:
        return text

    changes = await plan_changes(parse_patch("\n".join(body)), Path("/w"), read)
    new = changes[0].new_text or ""
    assert new.count("changed ") == 100
    assert changes[0].unified_diff.count("@@ -") == 100
