"""``pycodex compat``: run the compat matrix with pytest (pairs in parallel with pytest-xdist) and print it.

``python -m compat_tests.runner [--app SPEC ...] [--exec SPEC ...] [--scenario NAME ...] [-n auto]
[--all] [--junit FILE] [--logs DIR] [--reruns N] [--strict-flakes] [--history FILE] [--list [--format
text|github]]``; ``... bisect ...`` (bisect.py) and ``... history ...`` (history.py) are subcommands.
Builds are resolved (and built or installed) once up front; pytest gets the matrix through
``PYCODEX_COMPAT_*`` variables (support/matrix.py) and runs in matrix_run.py, which reruns failed tests
``--reruns`` times (one that then passes is ``flaky``). Each run adds a record to the history
(history.py). Exit status: 0 when nothing failed (flaky cells too, unless ``--strict-flakes``), 1 on any
failing pair, 2 on bad usage or a build that cannot be had (a bad version or ref, a failed npm or pip
install: the whole error is printed).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from compat_tests import bisect, history
from compat_tests.matrix_run import matrix_env, missing_plugins, run_matrix
from compat_tests.report import render_table
from compat_tests.support.builds import Build, BuildError, parse_spec, resolve_build
from compat_tests.support.matrix import SCENARIOS, pairs

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pycodex compat",
        description="Pit app-server and exec-server builds against each other and print the matrix.",
        epilog="SPEC: current | pycodex@REF (release or git ref; @last) | codex@VERSION | codex@latest | path:/abs/bin. "
        "Also: pycodex compat bisect --good REF --bad REF ... (the first breaking commit), "
        "pycodex compat history (each cell's recent outcomes); each has --help.",
    )
    parser.add_argument(
        "--app", action="extend", nargs="+", default=[], metavar="SPEC", help="app-server builds"
    )
    parser.add_argument(
        "--exec", action="extend", nargs="+", default=[], metavar="SPEC", help="exec-server builds"
    )
    parser.add_argument(
        "--scenario",
        action="extend",
        nargs="+",
        choices=SCENARIOS,
        default=[],
        help="scenarios (default: all)",
    )
    parser.add_argument("--all", action="store_true", help="the full matrix of releases and both transports")
    parser.add_argument(
        "-n", dest="workers", default="auto", help="parallel workers (pytest-xdist), 0 = serial"
    )
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    parser.add_argument(
        "--logs", type=Path, default=Path("compat-logs"), help="per-pair artifacts (./compat-logs)"
    )
    parser.add_argument(
        "--reruns",
        type=int,
        default=0,
        metavar="N",
        help="rerun a failed test up to N times (flaky if it passes)",
    )
    parser.add_argument("--strict-flakes", action="store_true", help="exit 1 on a flaky cell too")
    parser.add_argument(
        "--history",
        type=Path,
        metavar="FILE",
        help=f"run history (default: {history.HISTORY_NAME} beside --junit, else in --logs)",
    )
    parser.add_argument("--list", action="store_true", help="print the pairs instead of running them")
    parser.add_argument("--format", choices=("text", "github"), default="text", help="--list output format")
    return parser


def _list(scenarios: list[str], env: dict[str, str], fmt: str) -> None:
    rows = [{"scenario": s, "app": a, "exec": e} for s in scenarios for a, e in pairs(s, env)]
    if fmt == "github":
        print(json.dumps({"include": rows}, separators=(",", ":")))
    else:
        for row in rows:
            print(f"{row['scenario']}\t{row['app']}\t{row['exec']}")


def _resolve_all(
    scenarios: list[str], env: dict[str, str], given: list[str]
) -> tuple[list[Build], list[str]]:
    """Build or install every spec once (not inside a test's timeout): the builds, and each failure's reason.

    ``given`` (the --app/--exec specs) are resolved even when no chosen scenario pairs them, so a typo
    never passes unnoticed.
    """
    paired = (spec for s in scenarios for pair in pairs(s, env) for spec in pair)
    specs = dict.fromkeys(["current", *given, *paired])
    builds, failures = [], []
    for spec in specs:
        print(f"resolving {spec} ...", file=sys.stderr, flush=True)
        try:
            build = resolve_build(spec)
        except BuildError as exc:
            failures.append(str(exc))
            continue
        builds.append(build)
        if build.resolved:
            print(f"  {build.label}", file=sys.stderr, flush=True)
    return builds, failures


def main(argv: Sequence[str] | None = None) -> int:
    """``pycodex compat [bisect|history] ...``; the exit status (see the module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bisect"]:
        return bisect.main(argv[1:])
    if argv[:1] == ["history"]:
        return history.main(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.all and (args.app or args.exec):
        parser.error("--all runs the full matrix; leave out --app/--exec")
    if args.reruns < 0:
        parser.error("--reruns must be 0 or more")
    for spec in [*args.app, *args.exec]:
        try:
            parse_spec(spec)
        except ValueError as exc:
            parser.error(str(exc))
    scenarios = args.scenario or list(SCENARIOS)
    env = matrix_env(args.app, args.exec, full=args.all)
    if args.list:
        _list(scenarios, env, args.format)
        return 0
    absent = missing_plugins(args.workers)
    if absent:
        print(
            f"pycodex compat: {', '.join(absent)} missing; install the extra: pip install -e '.[compat]'",
            file=sys.stderr,
        )
        return 2
    logs = args.logs.resolve()
    logs.mkdir(parents=True, exist_ok=True)
    builds, failures = _resolve_all(scenarios, env, [*args.app, *args.exec])
    if failures:
        for reason in failures:
            print(f"pycodex compat: {reason}", file=sys.stderr)
        print(f"pycodex compat: {len(failures)} build(s) cannot be had; nothing ran", file=sys.stderr)
        return 2
    junit = (args.junit or Path(tempfile.mkdtemp(prefix="pycodex-compat-")) / "junit.xml").resolve()
    run = run_matrix(scenarios, env, builds, logs, junit, workers=args.workers, reruns=args.reruns)
    if not run.cells:
        tail = run.pytest_log.read_text(encoding="utf-8").splitlines()[-15:]
        print("\n".join(tail), file=sys.stderr)
        print(f"pycodex compat: {run.problem or 'pytest ran no pairs'}", file=sys.stderr)
        return 1 if run.problem else 0
    labels = {b.name: b.label for b in builds}
    print(render_table(run.cells, scenarios, labels))
    record_file = args.history or (junit.parent if args.junit else logs) / history.HISTORY_NAME
    resolved = {b.name: b.resolved for b in builds}
    history.append_record(record_file, history.make_record(run.cells, resolved))
    for line in history.flip_lines(history.read_history(record_file)[-history.RECENT :], run.cells):
        print(line)
    print(f"junit: {junit}\nlogs: {logs}\nhistory: {record_file}")
    if run.problem:
        print(f"pycodex compat: {run.problem}", file=sys.stderr)
    bad = {"fail", "flaky"} if args.strict_flakes else {"fail"}
    return 1 if run.problem or any(c.outcome in bad for c in run.cells) else 0


if __name__ == "__main__":
    sys.exit(main())
