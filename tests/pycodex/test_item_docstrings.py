"""Every public module, class and function of the item union, its builders and its views has a docstring."""

from __future__ import annotations

from tests.support.docstrings import missing_docstrings

# The item union, its builders, the rollout records and every client-side view of items.
ITEM_FILES = (
    "app_server/protocol/items.py",
    "app_server/threads/items.py",
    "app_server/store/records.py",
    "pycodex/item_views",
    "pycodex/trace",
    "pycodex/debug/render.py",
    "pycodex/debug/threads.py",
    "pycodex/demo.py",
    "pycodex/exec_cli",
    "agent_api/fork_events.py",
)


def test_the_item_files_have_no_public_definition_without_a_docstring() -> None:
    assert missing_docstrings(*ITEM_FILES) == []
