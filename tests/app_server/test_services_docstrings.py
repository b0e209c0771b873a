"""Every public module, class and function of the app-server's services has a docstring.

The services (threads, tools, store, model, MCP, config, search, skills, environments) are where the
handlers and the runner call in; a docstring is the contract a reader gets without reading the body.
``threads/items.py`` (the item builders) and ``store/records.py`` (the rollout records) are held to the same
rule by tests/pycodex/test_item_docstrings.py, beside the item views.
"""

from __future__ import annotations

import pytest

from tests.support.docstrings import missing_docstrings

COVERED = (
    "app_server/threads",
    "app_server/tools",
    "app_server/store",
    "app_server/model",
    "app_server/mcp",
    "app_server/config",
    "app_server/search",
    "app_server/skills",
    "app_server/environments.py",
    "app_server/notify.py",
    "app_server/truncation.py",
)
ELSEWHERE = ("app_server/threads/items.py", "app_server/store/records.py")


@pytest.mark.parametrize("package", COVERED)
def test_every_public_definition_has_a_docstring(package: str) -> None:
    missing = [m for m in missing_docstrings(package) if not m.startswith(ELSEWHERE)]
    assert missing == [], "public definitions without a docstring:\n" + "\n".join(missing)
