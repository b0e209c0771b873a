"""``pycodex compat``: run the compat matrix with pytest (pairs in parallel with pytest-xdist) and print it.

``python -m compat_tests.runner [--app SPEC ...] [--exec SPEC ...] [--scenario NAME ...] [-n auto]
[--all] [--junit FILE] [--logs DIR] [--list [--format text|github]]``. Builds are resolved (and built
or installed) once up front; pytest gets the matrix through ``PYCODEX_COMPAT_*`` variables
(support/matrix.py). Exit status: 0 when nothing failed, 1 on any failing pair, 2 on bad usage or a build
that cannot be had (a bad version or ref, a failed npm or pip install: the whole error is printed).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from compat_tests.report import read_junit, render_table
from compat_tests.support.builds import (
    RESOLVED_ENV,
    Build,
    BuildError,
    parse_spec,
    resolve_build,
    resolved_env,
)
from compat_tests.support.matrix import SCENARIO_FILES, SCENARIOS, pairs

__all__ = ["main"]

HERE = Path(__file__).resolve().parent
RUN_TIMEOUT = 3600.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pycodex compat",
        description="Pit app-server and exec-server builds against each other and print the matrix.",
        epilog="SPEC: current | pycodex@REF (release or git ref; @last) | codex@VERSION | codex@latest | path:/abs/bin",
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
    parser.add_argument("--list", action="store_true", help="print the pairs instead of running them")
    parser.add_argument("--format", choices=("text", "github"), default="text", help="--list output format")
    return parser


def _matrix_env(args: argparse.Namespace) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYCODEX_COMPAT_") or k == "PYCODEX_COMPAT_CACHE"
    }
    env.pop("PYCODEX_SLOW", None)
    if args.app:
        env["PYCODEX_COMPAT_APPS"] = " ".join(args.app)
    if args.exec:
        env["PYCODEX_COMPAT_EXECS"] = " ".join(args.exec)
    if args.all:
        env["PYCODEX_COMPAT_ALL"] = "1"
    return env


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
    parser = _parser()
    args = parser.parse_args(argv)
    if args.all and (args.app or args.exec):
        parser.error("--all runs the full matrix; leave out --app/--exec")
    for spec in [*args.app, *args.exec]:
        try:
            parse_spec(spec)
        except ValueError as exc:
            parser.error(str(exc))
    scenarios = args.scenario or list(SCENARIOS)
    env = _matrix_env(args)
    if args.list:
        _list(scenarios, env, args.format)
        return 0
    needed = ["pytest", "pytest_asyncio", "pytest_timeout"] + (
        ["xdist"] if args.workers not in ("0", "1") else []
    )
    absent = [name for name in needed if importlib.util.find_spec(name) is None]
    if absent:
        print(
            f"pycodex compat: {', '.join(absent)} missing; install the extra: pip install -e '.[compat]'",
            file=sys.stderr,
        )
        return 2
    logs = args.logs.resolve()
    logs.mkdir(parents=True, exist_ok=True)
    env["PYCODEX_COMPAT_LOGS"] = str(logs)
    builds, failures = _resolve_all(scenarios, env, [*args.app, *args.exec])
    if failures:
        for reason in failures:
            print(f"pycodex compat: {reason}", file=sys.stderr)
        print(f"pycodex compat: {len(failures)} build(s) cannot be had; nothing ran", file=sys.stderr)
        return 2
    env[RESOLVED_ENV] = resolved_env(builds)
    junit = (args.junit or Path(tempfile.mkdtemp(prefix="pycodex-compat-")) / "junit.xml").resolve()
    argv_ = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(HERE.parent)]
    argv_ += [str(HERE / SCENARIO_FILES[s]) for s in scenarios]
    argv_ += ["--junitxml", str(junit), "-o", "junit_logging=no"]
    if args.workers not in ("0", "1"):
        argv_ += ["-n", args.workers]
    pytest_log = logs / "pytest.log"
    with open(pytest_log, "w", encoding="utf-8") as out:
        try:
            done = subprocess.run(
                argv_,
                cwd=HERE.parent,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=RUN_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            print(
                f"pycodex compat: the matrix did not finish within {RUN_TIMEOUT:.0f}s (see {pytest_log})",
                file=sys.stderr,
            )
            return 1
    cells = read_junit(junit, logs) if junit.is_file() else []
    if not cells:
        tail = pytest_log.read_text(encoding="utf-8").splitlines()[-15:]
        print("\n".join(tail), file=sys.stderr)
        print(
            f"pycodex compat: pytest ran no pairs (exit {done.returncode}; log {pytest_log})", file=sys.stderr
        )
        return 1 if done.returncode not in (0, 5) else 0
    print(render_table(cells, scenarios, {b.name: b.label for b in builds}))
    print(f"junit: {junit}\nlogs: {logs}")
    failed = any(c.outcome == "fail" for c in cells)
    return 1 if failed or done.returncode not in (0, 5) else 0


if __name__ == "__main__":
    sys.exit(main())
