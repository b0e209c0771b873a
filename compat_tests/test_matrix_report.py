"""The sans-IO parts of ``pycodex compat``: spec parsing, the pair matrix, test ids and the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat_tests.report import Case, Cell, cells_of, read_cases, render_table, with_retry
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


def _junit(path: Path, cases: list[tuple[str, str, str]]) -> Path:
    """A JUnit file of (module, test name, outcome tag or "") testcases, as pytest writes them."""
    body = []
    for module, name, tag in cases:
        inner = f'<{tag} message="{name} went wrong">trace</{tag}>' if tag else ""
        body.append(
            f'<testcase classname="compat_tests.{module}" name="{name}" time="1.5">{inner}</testcase>'
        )
    path.write_text(f'<testsuites><testsuite name="pytest">{"".join(body)}</testsuite></testsuites>')
    return path


def test_a_cell_of_several_tests_shows_its_worst_outcome_and_its_first_failures_cause(tmp_path: Path) -> None:
    """turns-end runs one test per fault on each pair: a failing fault among passing and skipped ones fails
    the cell (a later pass does not hide it) and its cause is the first failing test's, read from that
    test's own cause.txt (turns-end writes one folder per fault), else JUnit's message."""
    pair = "[app=current,exec=current]"
    folder = log_dir(tmp_path, "turns-end", "current", "current")
    (folder / "test_b").mkdir(parents=True)
    (folder / "test_b" / "cause.txt").write_text("turn/completed never came\n")
    junit = _junit(
        tmp_path / "j.xml",
        [
            ("test_turns_end", f"test_a{pair}", ""),
            ("test_turns_end", f"test_b{pair}", "failure"),
            ("test_turns_end", f"test_c{pair}", "failure"),
            ("test_turns_end", f"test_d{pair}", "skipped"),
            ("test_turns_end", f"test_e{pair}", ""),
            ("test_stdio_client", f"test_x{pair}", ""),
            ("test_stdio_client", f"test_y{pair}", "skipped"),
            ("test_noise_version_skew", "test_z[app=current,exec=codex@0.169.0]", "skipped"),
        ],
    )
    cases = read_cases(junit, tmp_path)
    assert [c.node_id for c in cases][:2] == [
        f"compat_tests/test_turns_end.py::test_a{pair}",
        f"compat_tests/test_turns_end.py::test_b{pair}",
    ]
    assert cases[2].cause == f"test_c{pair} went wrong"
    cells = {(c.scenario, c.exec): c for c in cells_of(cases)}
    turns = cells[("turns-end", "current")]
    assert (turns.outcome, turns.cause, turns.tests, turns.seconds) == (
        "fail",
        "turn/completed never came",
        5,
        7.5,
    )
    assert cells[("stdio", "current")].outcome == "pass"  # passed and skipped: passed
    assert cells[("noise", "codex@0.169.0")].outcome == "skip"
    table = render_table(list(cells.values()), ["noise", "stdio", "turns-end"])
    assert "FAIL turns-end app=current exec=current: turn/completed never came" in table
    assert table.splitlines()[-1] == "1 passed, 1 failed, 1 skipped"


def test_a_rerun_that_passes_makes_a_flaky_case_that_keeps_each_failed_attempts_cause(tmp_path: Path) -> None:
    def case(outcome: str, cause: str = "") -> Case:
        return Case("noise", "current", "current", "id", outcome, cause, tmp_path / "noise", seconds=1.0)

    once = with_retry(case("fail", "relay reset"), case("pass"))
    assert (once.outcome, once.cause, once.failed_attempts, once.seconds) == (
        "flaky",
        "relay reset",
        ("relay reset",),
        2.0,
    )
    still = with_retry(case("fail", "relay reset"), case("fail", "timeout"))
    assert (still.outcome, still.cause, still.failed_attempts) == ("fail", "timeout", ("relay reset",))
    twice = with_retry(still, case("pass"))
    assert (twice.outcome, twice.failed_attempts) == ("flaky", ("relay reset", "timeout"))
    assert with_retry(still, None) is still  # the rerun did not run: the failure stands

    # fail > flaky > pass > skip within a cell; a flaky cell is explained with every failed attempt.
    for outcomes, worst in (
        (["pass", "flaky", "skip"], "flaky"),
        (["flaky", "fail"], "fail"),
        (["skip", "pass"], "pass"),
    ):
        group = [twice if o == "flaky" else case(o, o) for o in outcomes]
        assert [c.outcome for c in cells_of(group)] == [worst]
    [cell] = cells_of([case("pass"), twice])
    lines = render_table([cell], ["noise"]).splitlines()
    assert "FLAKY noise app=current exec=current: relay reset (failed 2 times, then passed)" in lines
    assert "    attempt 2: timeout" in lines
    assert f"    logs: {tmp_path / 'noise'} (failed attempt 1: {tmp_path / 'noise.attempt-1'})" in lines
    assert lines[-1] == "0 passed, 0 failed, 1 flaky, 0 skipped"
