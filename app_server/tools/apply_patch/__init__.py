"""The apply_patch library: Codex 0.169's patch format, matching and file changes, without any tool wiring.

``parse_patch`` turns the text into hunks, ``plan_changes`` computes every file's new contents (reading
through a callback, writing nothing), ``apply_changes`` performs them through a ``PatchFs`` and returns
Codex's success summary, ``extract_heredoc_patch`` recognises a shell command that is an apply_patch call.
Refusals raise ``PatchError`` whose ``message`` is Codex's text; the tool prefixes it with
``VERIFICATION_FAILED_PREFIX`` as Codex does for a patch it refuses before applying.
"""

from app_server.tools.apply_patch.heredoc import extract_heredoc_patch
from app_server.tools.apply_patch.parser import (
    AddFile,
    DeleteFile,
    Hunk,
    Patch,
    PatchError,
    UpdateChunk,
    UpdateFile,
    parse_patch,
)
from app_server.tools.apply_patch.plan import FileChange, PatchFs, apply_changes, os_error_text, plan_changes

__all__ = [
    "IMPLICIT_INVOCATION_MESSAGE",
    "VERIFICATION_FAILED_PREFIX",
    "AddFile",
    "DeleteFile",
    "FileChange",
    "Hunk",
    "Patch",
    "PatchError",
    "PatchFs",
    "UpdateChunk",
    "UpdateFile",
    "apply_changes",
    "extract_heredoc_patch",
    "os_error_text",
    "parse_patch",
    "plan_changes",
]

VERIFICATION_FAILED_PREFIX = "apply_patch verification failed: "
"""Codex's prefix for a patch refused at verification (parse errors, missing lines, unreadable files)."""

IMPLICIT_INVOCATION_MESSAGE = (
    'patch detected without explicit call to apply_patch. Rerun as ["apply_patch", "<patch>"]'
)
"""Codex's answer when a shell command is a bare patch body rather than an apply_patch call."""
