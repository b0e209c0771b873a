"""The sans-IO parts of ``pycodex compat``: spec parsing, the pair matrix, test ids and the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat_tests.report import Cell, render_table
from compat_tests.support.builds import parse_spec
from compat_tests.support.matrix import full_builds, log_dir, pair_id, pairs, parse_test_id


def test_specs_parse_into_kinds_and_bad_ones_say_what_is_accepted() -> None:
    assert parse_spec("current") == ("current", "")
    assert parse_spec("pycodex@0.1.0") == ("pycodex", "0.1.0")
    assert parse_spec("codex@latest") == ("codex", "latest")
    assert parse_spec("path:/opt/bin/codex") == ("path", "/opt/bin/codex")
    for bad in ("codex@", "path:relative/bin", "released", "npm:@openai/codex"):
        with pytest.raises(ValueError, match="expected current, pycodex@REF"):
            parse_spec(bad)


def test_the_default_matrix_is_current_with_codex_0169_both_ways_over_noise() -> None:
    assert pairs("noise", {}) == [
        ("current", "current"),
        ("current", "codex@0.169.0"),
        ("codex@0.169.0", "current"),
    ]


def test_the_full_matrix_pairs_every_build_with_every_build() -> None:
    builds = full_builds()
    assert builds[0] == "current" and builds[1].startswith("pycodex@")
    assert {"codex@0.168.0", "codex@0.169.0", "codex@0.171.0"} <= set(builds)
    for env in ({"PYCODEX_SLOW": "1"}, {"PYCODEX_COMPAT_ALL": "1"}):
        assert len(pairs("websocket", env)) == len(builds) ** 2
        assert pairs("stdio", env) == [(b, b) for b in builds]
        assert ("codex@0.168.0", "codex@0.169.0") in pairs("drift", env)


def test_an_explicit_matrix_crosses_apps_with_execs() -> None:
    env = {"PYCODEX_COMPAT_APPS": "current codex@0.168.0", "PYCODEX_COMPAT_EXECS": "codex@0.171.0"}
    assert pairs("noise", env) == [("current", "codex@0.171.0"), ("codex@0.168.0", "codex@0.171.0")]
    assert pairs("stdio", env) == [("current", "current"), ("codex@0.168.0", "codex@0.168.0")]
    assert pairs("drift", {"PYCODEX_COMPAT_APPS": "current"}) == []


def test_test_ids_round_trip_and_log_folders_are_file_safe() -> None:
    name = f"test_x[{pair_id('path:/a b/c', 'codex@0.169.0')}]"
    assert parse_test_id(name) == ("path:/a b/c", "codex@0.169.0")
    assert parse_test_id("test_x[plain]") is None
    assert log_dir(Path("/logs"), "noise", "path:/a b/c", "codex@0.169.0") == Path(
        "/logs/path_a_b_c__codex@0.169.0/noise"
    )


def test_the_table_shows_each_pair_once_and_explains_failures_and_skips() -> None:
    logs = Path("/logs/x")
    cells = [
        Cell("noise", "codex@0.169.0", "current", "fail", "exec-server exited rc=1 before registering", logs),
        Cell("noise", "current", "current", "pass", "", logs),
        Cell("stdio", "current", "current", "skip", "no build", logs),
    ]
    table = render_table(cells, ["noise", "stdio"]).splitlines()
    assert table[0].split() == ["APP", "EXEC", "noise", "stdio"]
    assert table[1].split() == ["current", "current", "pass", "skip"]
    assert table[2].split() == ["codex@0.169.0", "current", "fail", "-"]
    assert "FAIL noise app=codex@0.169.0 exec=current: exec-server exited rc=1 before registering" in table
    assert "    logs: /logs/x" in table
    assert "SKIP stdio app=current exec=current: no build" in table
    assert table[-1] == "1 passed, 1 failed, 1 skipped"
