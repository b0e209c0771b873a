"""parse_patch: the hunks it builds, Codex's leniencies, and its refusals with Codex's texts."""

from __future__ import annotations

import pytest

from app_server.tools.apply_patch import AddFile, DeleteFile, PatchError, UpdateChunk, UpdateFile, parse_patch


def _wrap(*lines: str) -> str:
    return "\n".join(("*** Begin Patch", *lines, "*** End Patch"))


def test_every_hunk_kind() -> None:
    patch = parse_patch(
        _wrap(
            "*** Add File: path/add.py",
            "+abc",
            "+def",
            "*** Delete File: path/delete.py",
            "*** Update File: path/update.py",
            "*** Move to: path/update2.py",
            "@@ def f():",
            "-    pass",
            "+    return 123",
        )
    )
    assert patch.hunks == [
        AddFile("path/add.py", "abc\ndef\n"),
        DeleteFile("path/delete.py"),
        UpdateFile(
            "path/update.py",
            "path/update2.py",
            [UpdateChunk("def f():", ("    pass",), ("    return 123",), False, (-1,))],
        ),
    ]


def test_chunks_context_eof_and_blank_lines() -> None:
    patch = parse_patch(
        _wrap(
            "*** Update File: f.txt",
            " keep",
            "-old",
            "+new",
            "",
            "@@ class B",
            " x",
            "+y",
            "*** End of File",
            "*** Add File: g.txt",
            "+g",
        )
    )
    first, second = patch.hunks
    assert isinstance(first, UpdateFile)
    a, b = first.chunks
    # A blank line inside a chunk is an empty context line.
    assert a == UpdateChunk(None, ("keep", "old", ""), ("keep", "new", ""), False, (0, -1, 2))
    assert b == UpdateChunk("class B", ("x",), ("x", "y"), True, (0, -1))
    assert second == AddFile("g.txt", "g\n")


def test_empty_patch_has_no_hunks() -> None:
    assert parse_patch("*** Begin Patch\n*** End Patch").hunks == []


@pytest.mark.parametrize(
    "text",
    [
        "  \n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n\n",
        "*** Begin Patch  \n*** Add File: a\n+x\n   *** End Patch",
        "<<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n",
        '<<"EOF"\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF',
        "<<EOF\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF",
        "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n",
        "*** Begin Patch\n   *** Add File: a   \n+x\n*** End Patch",
    ],
    ids=["outer-whitespace", "padded-markers", "heredoc-single", "heredoc-double", "heredoc-bare", "crlf", "padded-header"],
)
def test_lenient_forms(text: str) -> None:
    assert parse_patch(text).hunks == [AddFile("a", "x\n")]


def test_patch_text_drops_the_heredoc_wrapper() -> None:
    inner = "*** Begin Patch\n*** Delete File: a\n*** End Patch"
    assert parse_patch(f"<<'EOF'\n{inner}\nEOF\n").text == inner


def test_move_path_keeps_its_spacing_as_written() -> None:
    hunk = parse_patch(_wrap("*** Update File: a", "*** Move to: b ", "@@", "-x", "+y")).hunks[0]
    assert isinstance(hunk, UpdateFile)
    assert hunk.move_path == "b "


HEADERS = "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # An empty text fails on its (missing) last line, as in Codex.
        ("", "invalid patch: The last line of the patch must be '*** End Patch'"),
        ("  \n ", "invalid patch: The last line of the patch must be '*** End Patch'"),
        ("bad", "invalid patch: The first line of the patch must be '*** Begin Patch'"),
        ("*** Begin Patch\nbad", "invalid patch: The last line of the patch must be '*** End Patch'"),
        ("*** Begin Patch", "invalid patch: The last line of the patch must be '*** End Patch'"),
        ("<<'EOF'\n*** Begin Patch\n*** End Patch", "invalid patch: The first line of the patch must be '*** Begin Patch'"),
        (_wrap("*** Update File: test.py"), "invalid hunk at line 2, Update file hunk for path 'test.py' is empty"),
        (_wrap("garbage"), f"invalid hunk at line 2, 'garbage' is not a valid hunk header. {HEADERS}"),
        (_wrap("*** Add File: a", "+x", "oops"), f"invalid hunk at line 4, 'oops' is not a valid hunk header. {HEADERS}"),
        (_wrap("*** Update File: a", "@@"), "invalid hunk at line 4, Update hunk does not contain any lines"),
        (
            _wrap("*** Update File: a", "@@", "*** End of File"),
            "invalid hunk at line 4, Update hunk does not contain any lines",
        ),
        (
            _wrap("*** Update File: a", "@@", "bad"),
            "invalid hunk at line 4, Unexpected line found in update hunk: 'bad'. Every line should start with "
            "' ' (context line), '+' (added line), or '-' (removed line)",
        ),
        (
            _wrap("*** Update File: a", "-x", "bad"),
            "invalid hunk at line 4, Expected update hunk to start with a @@ context marker, got: 'bad'",
        ),
        (
            _wrap("*** Update File: a", "@@", "-x", "*** End Patch", "*** Delete File: b"),
            "invalid patch: The last line of the patch must be '*** End Patch'",
        ),
    ],
)
def test_refusals(text: str, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        parse_patch(text)
    assert caught.value.message == message
    assert str(caught.value) == message


def test_large_patch_parses_linearly() -> None:
    lines = ["*** Update File: big.txt"]
    for k in range(20_000):
        lines += ["@@", f" ctx {k}", f"-old {k}", f"+new {k}"]
    hunk = parse_patch(_wrap(*lines)).hunks[0]
    assert isinstance(hunk, UpdateFile)
    assert len(hunk.chunks) == 20_000
