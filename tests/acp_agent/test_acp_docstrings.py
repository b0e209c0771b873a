"""Every public module, class and function of ``acp_agent`` says what it is for."""

from __future__ import annotations

from tests.support.docstrings import missing_docstrings


def test_the_acp_agent_has_docstrings() -> None:
    assert missing_docstrings("acp_agent") == []
