"""Which (app build, exec build) pairs each scenario runs, from the environment; no I/O beyond reading it.

* ``PYCODEX_COMPAT_APPS`` / ``PYCODEX_COMPAT_EXECS`` (space-separated specs, see builds.py): an explicit
  matrix. The pair scenarios run every app x exec; ``stdio`` runs each app build alone; ``drift``
  compares each app build's schema (from) with each other exec build's (to). A missing side is ``current``.
* ``PYCODEX_COMPAT_ALL=1`` or ``PYCODEX_SLOW=1``: the full matrix over :func:`full_builds`.
* Otherwise the default slice ``.ci/run`` runs: current x {current, codex@0.169.0} both ways over Noise.

Pairs of a scenario in :data:`SLOW_SCENARIOS` outside its default slice are marked ``slow``.

Test ids are ``app=SPEC,exec=SPEC`` so a JUnit report names its pair; :func:`parse_test_id` reads them back.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from compat_tests.support.builds import releases

__all__ = [
    "CODEX_REFERENCE",
    "SCENARIOS",
    "SCENARIO_FILES",
    "SLOW_SCENARIOS",
    "SUPPORTED_RELEASES",
    "default_slice",
    "full_builds",
    "is_slow",
    "log_dir",
    "pair_id",
    "pairs",
    "parse_test_id",
]

CODEX_REFERENCE = "codex@0.169.0"
#: scenario name -> the test module that runs it.
SCENARIO_FILES = {
    "noise": "test_noise_version_skew.py",
    "websocket": "test_websocket_transport.py",
    "stdio": "test_stdio_client.py",
    "drift": "test_protocol_drift.py",
    "storage": "test_storage_skew.py",
    "turns-end": "test_turns_end.py",
    "acp": "test_acp_adapter.py",
    "clients": "test_clients.py",
}
SCENARIOS = tuple(SCENARIO_FILES)
_DEFAULT: dict[str, list[tuple[str, str]]] = {
    "noise": [("current", "current"), ("current", CODEX_REFERENCE), (CODEX_REFERENCE, "current")],
    "websocket": [("current", CODEX_REFERENCE)],
    "stdio": [("current", "current")],
    "drift": [("current", CODEX_REFERENCE), (CODEX_REFERENCE, "current")],
    "storage": [("current", "current"), ("current", CODEX_REFERENCE), (CODEX_REFERENCE, "current")],
    "turns-end": [("current", "current"), (CODEX_REFERENCE, CODEX_REFERENCE)],
    "acp": [("current", "current"), (CODEX_REFERENCE, CODEX_REFERENCE)],
    "clients": [("current", "current")],
}
#: Scenarios whose pairs take long enough (several app-servers, many turns) that only the default slice is
#: quick: their other pairs are marked ``slow``.
SLOW_SCENARIOS = frozenset({"storage", "acp", "clients"})
#: How many pycodex releases back the checkout keeps its protocol for (README "Skew policy"): the full
#: matrix's drift pairs run from each of them (``pycodex@last`` for the newest) to ``current``.
SUPPORTED_RELEASES = 2
#: Drift pairs (from, to): Codex's releases in order, then what a client written for the checkout meets
#: in Codex. The full matrix adds the supported pycodex releases -> current (:func:`_drift_pairs`).
_DRIFT_CHAIN = [
    ("codex@0.168.0", "codex@0.169.0"),
    ("codex@0.169.0", "codex@0.171.0"),
    ("current", "codex@0.169.0"),
    ("current", "codex@0.171.0"),
    ("codex@0.169.0", "current"),  # what a client generated from Codex's schema meets in pycodex's
]


def _drift_pairs() -> list[tuple[str, str]]:
    """The full matrix's drift pairs: :data:`_DRIFT_CHAIN`, then "what did this checkout break for
    clients of" each supported release (the older ones by version, the newest as ``pycodex@last``)."""
    older = [f"pycodex@{version}" for version, _ in releases()[-SUPPORTED_RELEASES:-1]]
    return [*_DRIFT_CHAIN, *((spec, "current") for spec in [*older, "pycodex@last"])]


def full_builds() -> list[str]:
    """The builds of the full matrix: current, every pycodex release (oldest first), three Codex releases."""
    return [
        "current",
        *(f"pycodex@{version}" for version, _ in releases()),
        "codex@0.168.0",
        CODEX_REFERENCE,
        "codex@0.171.0",
    ]


def _specs(env: Mapping[str, str], var: str) -> list[str]:
    return env.get(var, "").split()


def _full(env: Mapping[str, str]) -> bool:
    return env.get("PYCODEX_COMPAT_ALL") == "1" or env.get("PYCODEX_SLOW") == "1"


def default_slice(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``env`` asks for no matrix (neither ``--app``/``--exec`` nor the full one): the default slice."""
    env = os.environ if env is None else env
    return not (_specs(env, "PYCODEX_COMPAT_APPS") or _specs(env, "PYCODEX_COMPAT_EXECS") or _full(env))


def pairs(scenario: str, env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The (app, exec) pairs ``scenario`` runs under ``env`` (default: this process's environment)."""
    env = os.environ if env is None else env
    apps, execs = _specs(env, "PYCODEX_COMPAT_APPS"), _specs(env, "PYCODEX_COMPAT_EXECS")
    if apps or execs:
        apps, execs = apps or ["current"], execs or ["current"]
        if scenario in ("stdio", "turns-end", "acp", "clients"):
            return [(app, app) for app in dict.fromkeys(apps)]
        if scenario == "drift":
            return [(a, e) for a in apps for e in execs if a != e]
        return [(a, e) for a in apps for e in execs]
    if _full(env):
        builds = full_builds()
        if scenario in ("stdio", "turns-end", "acp", "clients"):
            return [(b, b) for b in builds]
        if scenario == "drift":
            return _drift_pairs()
        return [(a, e) for a in builds for e in builds]
    return list(_DEFAULT[scenario])


def is_slow(scenario: str, app: str, exec_: str) -> bool:
    """Whether the pair is marked ``slow``: a slow scenario's pair outside its default slice."""
    return scenario in SLOW_SCENARIOS and (app, exec_) not in _DEFAULT[scenario]


def pair_id(app: str, exec_: str) -> str:
    return f"app={app},exec={exec_}"


_ID = re.compile(r"\[app=(?P<app>[^,\]]+),exec=(?P<exec>[^\]]+)\]$")


def parse_test_id(name: str) -> tuple[str, str] | None:
    """(app, exec) from a test name such as ``test_x[app=current,exec=codex@0.169.0]``."""
    match = _ID.search(name)
    return (match["app"], match["exec"]) if match else None


def log_dir(root: Path, scenario: str, app: str, exec_: str) -> Path:
    """The folder of one pair's artifacts: ``ROOT/APP__EXEC/SCENARIO`` with specs made file-safe."""

    def safe(spec: str) -> str:
        return re.sub(r"[^A-Za-z0-9@._-]+", "_", spec).strip("_")

    return root / f"{safe(app)}__{safe(exec_)}" / scenario
