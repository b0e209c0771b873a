"""Every public module, class and function of the exec side has a docstring.

The exec-server (its connection, router, services and remote mode), its client and the shared wire (protocol
models, Noise, relay frames, registry), the relay and the agent API are read by people wiring a new edge or
a new backend; each public definition says what it is for. ``agent_api/fork_events.py`` belongs to another
part of the tree and is left to its owner.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.docstrings import missing_docstrings
from tests.support.paths import REPO_ROOT

NOT_OURS = frozenset({"agent_api/fork_events.py"})


def _agent_api_files() -> list[str]:
    paths = sorted((REPO_ROOT / "agent_api").rglob("*.py"))
    return [rel for rel in (str(Path(p).relative_to(REPO_ROOT)) for p in paths) if rel not in NOT_OURS]


def test_the_exec_side_has_docstrings() -> None:
    assert missing_docstrings("exec_server", "exec_client", "relay", *_agent_api_files()) == []
