"""Patch scenarios for the apply_patch library and its differential test against Codex.

Each scenario is a folder's files before, a patch, and either the files after plus the success summary, or
the error text (with ``{root}`` for the folder). Modelled on the kinds of cases in Codex's
``apply-patch/tests/fixtures/scenarios`` (our own data). Also a local ``PatchFs`` and reader for tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from app_server.tools.apply_patch import apply_changes, parse_patch, plan_changes


@dataclass(frozen=True)
class Scenario:
    """Files before (relative path -> text), the patch, and the expected outcome."""

    name: str
    before: dict[str, str]
    patch: str
    after: dict[str, str] | None = None
    summary: str | None = None
    error: str | None = None
    differential: bool = True
    tags: tuple[str, ...] = field(default=())


def _p(*lines: str) -> str:
    return "\n".join(("*** Begin Patch", *lines, "*** End Patch")) + "\n"


SCENARIOS: list[Scenario] = [
    Scenario(
        "add_file",
        {},
        _p("*** Add File: notes.md", "+# Notes", "+", "+first"),
        {"notes.md": "# Notes\n\nfirst\n"},
        "A notes.md\n",
    ),
    Scenario(
        "add_nested_and_delete_and_modify",
        {"gone.txt": "bye\n", "edit.txt": "alpha\nbeta\n"},
        _p(
            "*** Add File: deep/er/new.txt",
            "+fresh",
            "*** Delete File: gone.txt",
            "*** Update File: edit.txt",
            "@@",
            " alpha",
            "-beta",
            "+BETA",
        ),
        {"deep/er/new.txt": "fresh\n", "edit.txt": "alpha\nBETA\n"},
        "A deep/er/new.txt\nM edit.txt\nD gone.txt\n",
    ),
    Scenario(
        "several_chunks",
        {"m.txt": "l1\nl2\nl3\nl4\nl5\nl6\n"},
        _p("*** Update File: m.txt", "@@", " l1", "-l2", "+two", "@@", " l4", "-l5", "+five", " l6"),
        {"m.txt": "l1\ntwo\nl3\nl4\nfive\nl6\n"},
        "M m.txt\n",
    ),
    Scenario(
        "move_to_new_directory",
        {"src/a.txt": "keep\nold\n", "src/b.txt": "untouched\n"},
        _p("*** Update File: src/a.txt", "*** Move to: dst/sub/a2.txt", "@@", " keep", "-old", "+new"),
        {"dst/sub/a2.txt": "keep\nnew\n", "src/b.txt": "untouched\n"},
        "M dst/sub/a2.txt\n",
    ),
    Scenario(
        "move_overwrites_destination",
        {"a.txt": "x\n", "b.txt": "previous\n"},
        _p("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-x", "+y"),
        {"b.txt": "y\n"},
        "M b.txt\n",
    ),
    Scenario(
        "add_overwrites_existing",
        {"dup.txt": "old contents\n"},
        _p("*** Add File: dup.txt", "+replaced"),
        {"dup.txt": "replaced\n"},
        "A dup.txt\n",
    ),
    Scenario(
        "end_of_file_anchor",
        {"tail.txt": "x\nlast\nmid\nlast\n"},
        _p("*** Update File: tail.txt", "@@", "-last", "+LAST", "*** End of File"),
        {"tail.txt": "x\nlast\nmid\nLAST\n"},
        "M tail.txt\n",
    ),
    Scenario(
        "context_header_seeks_first",
        {"c.py": "def a():\n    return 1\n\ndef b():\n    return 1\n"},
        _p("*** Update File: c.py", "@@ def b():", "-    return 1", "+    return 2"),
        {"c.py": "def a():\n    return 1\n\ndef b():\n    return 2\n"},
        "M c.py\n",
    ),
    Scenario(
        "first_chunk_without_header",
        {"f.txt": "import os\nprint(1)\n"},
        _p("*** Update File: f.txt", " import os", "+import sys", " print(1)"),
        {"f.txt": "import os\nimport sys\nprint(1)\n"},
        "M f.txt\n",
    ),
    Scenario(
        "pure_addition_appends",
        {"p.txt": "one\ntwo\n"},
        _p("*** Update File: p.txt", "@@", "+three", "+four"),
        {"p.txt": "one\ntwo\nthree\nfour\n"},
        "M p.txt\n",
    ),
    Scenario(
        "deletion_only",
        {"d.txt": "a\nb\nc\n"},
        _p("*** Update File: d.txt", "@@", " a", "-b", " c"),
        {"d.txt": "a\nc\n"},
        "M d.txt\n",
    ),
    Scenario(
        "appends_trailing_newline",
        {"n.txt": "a\nb\nc"},
        _p("*** Update File: n.txt", "@@", " a", "-b", "+B"),
        {"n.txt": "a\nB\nc\n"},
        "M n.txt\n",
    ),
    Scenario(
        "crlf_kept",
        {"w.txt": "a\r\nb\r\nc\r\n"},
        _p("*** Update File: w.txt", "@@", " a", "-b", "+B", "+B2"),
        {"w.txt": "a\r\nB\r\nB2\r\nc\r\n"},
        "M w.txt\n",
    ),
    Scenario(
        "mixed_endings_context_kept",
        {"mx.txt": "x\r\ny\nz\n"},
        _p("*** Update File: mx.txt", "@@", " y", "+n", "-z", "+Z"),
        {"mx.txt": "x\r\ny\nn\r\nZ\r\n"},
        "M mx.txt\n",
    ),
    Scenario(
        "pure_addition_after_blank_last_line",
        {"b.txt": "a\n\n"},
        _p("*** Update File: b.txt", "@@", "+x"),
        {"b.txt": "a\n\nx\n"},
        "M b.txt\n",
    ),
    Scenario(
        "blank_line_in_chunk_is_context",
        {"bl.txt": "a\n\nb\n"},
        "*** Begin Patch\n*** Update File: bl.txt\n@@\n a\n\n-b\n+B\n*** End Patch\n",
        {"bl.txt": "a\n\nB\n"},
        "M bl.txt\n",
    ),
    Scenario(
        "end_of_file_must_be_at_end",
        {"e.txt": "a\nlast\nz\n"},
        _p("*** Update File: e.txt", "@@", "-last", "+LAST", "*** End of File"),
        {"e.txt": "a\nlast\nz\n"},
        error="Failed to find expected lines in {root}/e.txt:\nlast",
    ),
    Scenario(
        "trailing_whitespace_ignored",
        {"t.txt": "keep  \nold\t\n"},
        _p("*** Update File: t.txt", "@@", " keep", "-old", "+new"),
        {"t.txt": "keep  \nnew\n"},
        "M t.txt\n",
    ),
    Scenario(
        "indentation_ignored",
        {"i.txt": "    if x:\n        y()\n"},
        _p("*** Update File: i.txt", "@@", " if x:", "-y()", "+        z()"),
        {"i.txt": "    if x:\n        z()\n"},
        "M i.txt\n",
    ),
    Scenario(
        "unicode_punctuation",
        {"u.txt": "say \u201chi\u201d \u2014 now\nend\n"},
        _p("*** Update File: u.txt", "@@", '-say "hi" - now', "+say hello"),
        {"u.txt": "say hello\nend\n"},
        "M u.txt\n",
    ),
    Scenario(
        "padded_markers_and_header",
        {"pad.txt": "one\n"},
        "*** Begin Patch \n  *** Update File: pad.txt\n@@\n-one\n+two\n *** End Patch\n",
        {"pad.txt": "two\n"},
        "M pad.txt\n",
    ),
    Scenario(
        "heredoc_wrapped",
        {"h.txt": "a\n"},
        "<<'EOF'\n" + _p("*** Update File: h.txt", "@@", "-a", "+b") + "EOF\n",
        {"h.txt": "b\n"},
        "M h.txt\n",
    ),
    Scenario(
        "same_file_twice",
        {"s.txt": "1\n2\n3\n"},
        _p("*** Update File: s.txt", "@@", "-1", "+one", "*** Update File: s.txt", "@@", "-3", "+three"),
        {"s.txt": "one\n2\nthree\n"},
        "M s.txt\nM s.txt\n",
    ),
    Scenario(
        "trailing_blank_pattern_retried",
        {"r.txt": "a\nb\n"},
        "*** Begin Patch\n*** Update File: r.txt\n@@\n a\n-b\n+c\n\n*** End Patch\n",
        {"r.txt": "a\nc\n"},
        "M r.txt\n",
    ),
    Scenario(
        "crlf_unterminated_last_line",
        {"cu.txt": "a\r\nb"},
        _p("*** Update File: cu.txt", "@@", "-a", "+A"),
        {"cu.txt": "A\r\nb\r\n"},
        "M cu.txt\n",
    ),
    Scenario(
        "patch_text_with_crlf",
        {"pc.txt": "a\n"},
        "*** Begin Patch\r\n*** Update File: pc.txt\r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n",
        {"pc.txt": "b\n"},
        "M pc.txt\n",
    ),
    Scenario(
        "add_empty_file",
        {},
        _p("*** Add File: empty.txt"),
        {"empty.txt": ""},
        "A empty.txt\n",
    ),
    Scenario(
        "update_then_delete",
        {"ud.txt": "a\n"},
        _p("*** Update File: ud.txt", "@@", "-a", "+b", "*** Delete File: ud.txt"),
        {},
        "M ud.txt\nD ud.txt\n",
    ),
    Scenario(
        "context_header_fuzzy",
        {"cf.py": "class A:\n    x = 1\nclass B:  \n    x = 1\n"},
        _p("*** Update File: cf.py", "@@ class B:", "-    x = 1", "+    x = 2"),
        {"cf.py": "class A:\n    x = 1\nclass B:  \n    x = 2\n"},
        "M cf.py\n",
    ),
    Scenario(
        "header_then_eof",
        {"he.txt": "k\nend\n"},
        _p("*** Update File: he.txt", "@@ k", " end", "+after", "*** End of File"),
        {"he.txt": "k\nend\nafter\n"},
        "M he.txt\n",
    ),
    Scenario(
        "delete_then_update_fails",
        {"du.txt": "a\n"},
        _p("*** Delete File: du.txt", "*** Update File: du.txt", "@@", "-a", "+b"),
        None,
        error="Failed to read file to update {root}/du.txt: No such file or directory (os error 2)",
        # The standalone binary deletes before it fails; the app-server verifies first, as we do.
        differential=False,
    ),
    Scenario(
        "second_chunk_without_header",
        {"k.txt": "k\n"},
        _p("*** Update File: k.txt", "@@", "-k", "+K", "junk"),
        {"k.txt": "k\n"},
        error="invalid hunk at line 6, Expected update hunk to start with a @@ context marker, got: 'junk'",
    ),
    Scenario(
        "unexpected_line_in_chunk",
        {"k.txt": "k\n"},
        _p("*** Update File: k.txt", "@@", "junk"),
        {"k.txt": "k\n"},
        error="invalid hunk at line 4, Unexpected line found in update hunk: 'junk'. Every line should start "
        "with ' ' (context line), '+' (added line), or '-' (removed line)",
    ),
    Scenario(
        "chunk_header_without_lines",
        {"k.txt": "k\n"},
        _p("*** Update File: k.txt", "@@"),
        {"k.txt": "k\n"},
        error="invalid hunk at line 4, Update hunk does not contain any lines",
    ),
    Scenario(
        "end_of_file_without_lines",
        {"k.txt": "k\n"},
        _p("*** Update File: k.txt", "@@", "*** End of File"),
        {"k.txt": "k\n"},
        error="invalid hunk at line 4, Update hunk does not contain any lines",
    ),
    Scenario(
        "later_hunk_header_line_number",
        {"k.txt": "k\n"},
        _p("*** Add File: n.txt", "+1", "+2", "*** Update File: k.txt", "@@", "-k", "+K", "*** Bogus"),
        {"k.txt": "k\n"},
        error="invalid hunk at line 9, Expected update hunk to start with a @@ context marker, got: '*** Bogus'",
    ),
    Scenario(
        "bogus_header_after_add",
        {},
        _p("*** Add File: n.txt", "+1", "*** Bogus"),
        {},
        error="invalid hunk at line 4, '*** Bogus' is not a valid hunk header. "
        "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
    ),
    Scenario(
        "early_end_marker_then_blank",
        {"k.txt": "k\n"},
        _p("*** Update File: k.txt", "@@", "-k", "+K", "*** End Patch", ""),
        {"k.txt": "K\n"},
        "M k.txt\n",
    ),
    Scenario(
        "early_end_marker_then_hunk",
        {"k.txt": "k\n"},
        _p("*** Update File: k.txt", "@@", "-k", "+K", "*** End Patch", "*** Add File: q.txt", "+q"),
        {"k.txt": "k\n"},
        error="invalid patch: The last line of the patch must be '*** End Patch'",
    ),
    Scenario(
        "move_marker_in_chunks",
        {"k.txt": "k\n"},
        _p("*** Update File: k.txt", "@@", "-k", "+K", "*** Move to: z.txt"),
        {"k.txt": "k\n"},
        error="invalid hunk at line 6, Expected update hunk to start with a @@ context marker, "
        "got: '*** Move to: z.txt'",
    ),
    Scenario(
        "blank_line_between_hunks",
        {},
        _p("*** Add File: a.txt", "+a", "", "*** Add File: b.txt", "+b"),
        {},
        error="invalid hunk at line 4, '' is not a valid hunk header. "
        "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
    ),
    Scenario(
        "missing_expected_lines",
        {"e.txt": "alpha\n"},
        _p("*** Update File: e.txt", "@@", "-nothere", "-either", "+x"),
        {"e.txt": "alpha\n"},
        error="Failed to find expected lines in {root}/e.txt:\nnothere\neither",
    ),
    Scenario(
        "missing_context",
        {"e.txt": "alpha\n"},
        _p("*** Update File: e.txt", "@@ class Nope", "-alpha", "+x"),
        {"e.txt": "alpha\n"},
        error="Failed to find context 'class Nope' in {root}/e.txt",
    ),
    Scenario(
        "update_missing_file",
        {},
        _p("*** Update File: absent.txt", "@@", "-a", "+b"),
        {},
        error="Failed to read file to update {root}/absent.txt: No such file or directory (os error 2)",
    ),
    Scenario(
        "invalid_hunk_header",
        {"k.txt": "k\n"},
        _p("*** Frobnicate File: k.txt"),
        {"k.txt": "k\n"},
        error="invalid hunk at line 2, '*** Frobnicate File: k.txt' is not a valid hunk header. "
        "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
    ),
    Scenario(
        "empty_update_hunk",
        {"k.txt": "k\n"},
        _p("*** Update File: k.txt"),
        {"k.txt": "k\n"},
        error="invalid hunk at line 2, Update file hunk for path 'k.txt' is empty",
    ),
    Scenario(
        "missing_end_marker",
        {},
        "*** Begin Patch\n*** Add File: z.txt\n+z\n",
        {},
        error="invalid patch: The last line of the patch must be '*** End Patch'",
    ),
    Scenario(
        "missing_begin_marker",
        {},
        "*** Add File: z.txt\n+z\n*** End Patch\n",
        {},
        error="invalid patch: The first line of the patch must be '*** Begin Patch'",
    ),
    Scenario(
        "blank_patch_text",
        {},
        "  \n",
        {},
        error="invalid patch: The last line of the patch must be '*** End Patch'",
    ),
    Scenario(
        "empty_patch",
        {"k.txt": "k\n"},
        "*** Begin Patch\n*** End Patch\n",
        {"k.txt": "k\n"},
        error="No files were modified.",
    ),
    Scenario(
        "update_directory_fails",
        {"dir/foo.txt": "f\n"},
        _p("*** Update File: dir", "@@", "-f", "+g"),
        {"dir/foo.txt": "f\n"},
        error="Failed to read file to update {root}/dir: path `{root}/dir` is not a file",
    ),
    Scenario(
        "delete_directory_fails",
        {"dir/foo.txt": "f\n"},
        _p("*** Delete File: dir"),
        {"dir/foo.txt": "f\n"},
        error="Failed to read {root}/dir: path `{root}/dir` is not a file",
        differential=False,
    ),
    Scenario(
        "delete_missing_file",
        {},
        _p("*** Delete File: nothing.txt"),
        {},
        error="Failed to read {root}/nothing.txt: No such file or directory (os error 2)",
        # The standalone binary says "Failed to delete file ..."; the app-server verifies first, as we do.
        differential=False,
    ),
]


class LocalFs:
    """A ``PatchFs`` on the local disk."""

    async def write_text(self, path: Path, text: str) -> None:
        """Write ``text`` without newline translation."""
        path.write_bytes(text.encode())

    async def remove(self, path: Path) -> None:
        """Remove the file."""
        path.unlink()

    async def mkdirs(self, path: Path) -> None:
        """Create the folder and its parents."""
        path.mkdir(parents=True, exist_ok=True)


async def read_local(path: Path) -> str:
    """Read a file as UTF-8 without newline translation."""
    return path.read_bytes().decode()


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Create ``files`` under ``root``."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode())


def read_tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> text)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes().decode() for p in sorted(root.rglob("*")) if p.is_file()
    }


async def run_ours(root: Path, patch_text: str) -> tuple[str | None, str | None]:
    """Apply ``patch_text`` in ``root`` with our library: (summary, error message)."""
    from app_server.tools.apply_patch import PatchError

    try:
        changes = await plan_changes(parse_patch(patch_text), root, read_local)
        return await apply_changes(changes, LocalFs()), None
    except PatchError as exc:
        return None, exc.message
