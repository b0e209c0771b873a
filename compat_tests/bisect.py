"""``pycodex compat bisect``: the first commit of this repository that breaks compat with a build.

``pycodex compat bisect --good REF --bad REF [--scenario NAME ...] [--against SPEC] [--one-way]
[--shared-deps] [--reruns N] [-n W] [--logs DIR]``

The commits are ``git rev-list --first-parent good..bad`` (a merge is probed as one commit). Each probed
commit is built as ``pycodex@COMMIT`` (support/builds.py: a verified ``git archive`` export in its own
venv) and the scenarios run with it as the app side against ``--against`` (default the reference Codex,
``codex@0.169.0``) as the exec side, and, for the scenarios that pair two builds, the other way round too
(``--one-way``: only the commit as the app side). A probe is bad when any cell with the commit in it
fails, good when the rest passed, and skipped (as ``git bisect skip``, reported) when the commit cannot
be built or no cell ran. ``bad`` and ``good`` are probed first: each must be what it is said to be.
``--shared-deps`` installs each commit with ``--no-deps`` over this interpreter's site-packages (seconds
instead of a full install; the code is still the commit's, its dependencies today's).

Exit status: 0 with the first bad commit (hash, subject and the cause of its first failing cell);
1 when ``good`` is not good or ``bad`` not bad (with why), or skipped commits leave the answer open
(all candidates listed); 2 on bad usage (an unknown ref, good not an ancestor of bad, a bad spec, an
``--against`` build that cannot be had).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from compat_tests.matrix_run import matrix_env, missing_plugins, run_matrix
from compat_tests.support.builds import (
    REPO_ROOT,
    Build,
    BuildError,
    commit_build,
    parse_spec,
    resolve_build,
)
from compat_tests.support.matrix import CODEX_REFERENCE, SCENARIOS, pairs

__all__ = ["Probe", "Search", "main", "run_bisect", "search"]


@dataclass(frozen=True)
class Probe:
    """What running the scenarios on one commit said: ``good``, ``bad`` (``detail``: the first failing
    cell and its cause) or ``skip`` (``detail``: why the commit could not be tested)."""

    verdict: str
    detail: str = ""


@dataclass(frozen=True)
class Search:
    """The end of a bisection: the first bad commit, or (skips in the way) every commit it could be."""

    first_bad: str | None
    candidates: tuple[str, ...]
    probes: dict[str, Probe]


def search(commits: Sequence[str], probe: Callable[[str], Probe]) -> Search:
    """Binary search of ``commits`` (oldest first; the last one is known bad, the one before the first
    known good) for the first bad one. A skipped commit is stepped over: the next probe is the untested
    commit nearest the middle, as ``git bisect skip`` does."""
    probes: dict[str, Probe] = {}
    lo, hi, skipped = -1, len(commits) - 1, set[int]()
    while True:
        untested = [i for i in range(lo + 1, hi) if i not in skipped]
        if not untested:
            break
        middle = (lo + hi) / 2
        index = min(untested, key=lambda i: (abs(i - middle), i))
        result = probes[commits[index]] = probe(commits[index])
        if result.verdict == "good":
            lo = index
        elif result.verdict == "bad":
            hi = index
        else:
            skipped.add(index)
    open_ = tuple(commits[i] for i in sorted(skipped) if lo < i < hi)
    if open_:
        return Search(None, (*open_, commits[hi]), probes)
    return Search(commits[hi], (commits[hi],), probes)


def _git(*args: str) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=60, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


def _subject(sha: str) -> str:
    return _git("log", "-1", "--format=%s", sha) or ""


def _single_build(scenario: str) -> bool:
    """Whether ``scenario`` runs an app build alone (stdio, turns-end) rather than pairing two builds."""
    return pairs(scenario, {"PYCODEX_COMPAT_APPS": "a", "PYCODEX_COMPAT_EXECS": "b"}) == [("a", "a")]


@dataclass(frozen=True)
class _Prober:
    """Builds and runs one commit (see the module docstring)."""

    scenarios: tuple[str, ...]
    against: Build
    relay: Build
    both_ways: bool
    shared_site: tuple[Path, ...]
    logs: Path
    workers: str
    reruns: int

    def __call__(self, sha: str) -> Probe:
        spec = f"pycodex@{sha}"
        print(f"probing {sha[:12]} {_subject(sha)}", file=sys.stderr, flush=True)
        try:
            build = commit_build(spec, sha, shared_site=self.shared_site)
        except BuildError as exc:
            # pip's whole error is long (often a traceback, whose last line says what went wrong): it goes
            # to a file, the report gets that last line.
            error_file = self.logs / sha[:12] / "build-error.txt"
            error_file.parent.mkdir(parents=True, exist_ok=True)
            error_file.write_text(f"{exc}\n", encoding="utf-8")
            last = next((line.strip() for line in reversed(str(exc).splitlines()) if line.strip()), "")
            return self._report(sha, Probe("skip", f"cannot build: {last} (the whole error: {error_file})"))
        runs = [("app", spec, self.against.name, self.scenarios)]
        reverse = tuple(s for s in self.scenarios if not _single_build(s))
        if self.both_ways and reverse:
            runs.append(("exec", self.against.name, spec, reverse))
        cells = []
        for side, app, exec_, scenarios in runs:
            folder = self.logs / sha[:12] / side
            folder.mkdir(parents=True, exist_ok=True)
            builds = list({b.name: b for b in (build, self.against, self.relay)}.values())
            run = run_matrix(
                scenarios,
                matrix_env([app], [exec_]),
                builds,
                folder,
                folder / "junit.xml",
                workers=self.workers,
                reruns=self.reruns,
            )
            if run.problem:
                return self._report(sha, Probe("skip", f"the matrix went wrong: {run.problem}"))
            cells += [c for c in run.cells if spec in (c.app, c.exec)]
        failed = [c for c in cells if c.outcome == "fail"]
        if failed:
            c = failed[0]
            return self._report(sha, Probe("bad", f"{c.scenario} app={c.app} exec={c.exec}: {c.cause}"))
        if not any(c.outcome in ("pass", "flaky") for c in cells):
            why = next((c.cause for c in cells if c.cause), "no cell with the commit in it")
            return self._report(sha, Probe("skip", f"nothing ran: {why}"))
        return self._report(sha, Probe("good"))

    def _report(self, sha: str, probe: Probe) -> Probe:
        detail = f": {probe.detail}" if probe.detail else ""
        print(f"  {sha[:12]} {probe.verdict}{detail}", file=sys.stderr, flush=True)
        return probe


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pycodex compat bisect",
        description="Find the first commit between a good and a bad one that breaks compat with a build.",
    )
    parser.add_argument("--good", required=True, metavar="REF", help="a commit where the scenarios pass")
    parser.add_argument("--bad", required=True, metavar="REF", help="a later commit where they fail")
    parser.add_argument(
        "--scenario",
        action="extend",
        nargs="+",
        choices=SCENARIOS,
        default=[],
        help="scenarios (default: all)",
    )
    parser.add_argument(
        "--against",
        default=CODEX_REFERENCE,
        metavar="SPEC",
        help=f"the other side of each pair ({CODEX_REFERENCE})",
    )
    parser.add_argument("--one-way", action="store_true", help="only the probed commit as the app side")
    parser.add_argument(
        "--shared-deps",
        action="store_true",
        help="install each commit --no-deps over this interpreter's packages",
    )
    parser.add_argument(
        "--reruns", type=int, default=0, metavar="N", help="rerun a failed test up to N times"
    )
    parser.add_argument(
        "-n", dest="workers", default="auto", help="parallel workers (pytest-xdist), 0 = serial"
    )
    parser.add_argument(
        "--logs",
        type=Path,
        default=Path("compat-logs") / "bisect",
        help="per-probe artifacts (LOGS/COMMIT12/)",
    )
    return parser


def _commit(ref: str) -> str | None:
    return _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")


def main(argv: Sequence[str]) -> int:
    """``pycodex compat bisect``; the exit status (see the module docstring)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        parse_spec(args.against)
    except ValueError as exc:
        parser.error(str(exc))
    if args.reruns < 0:
        parser.error("--reruns must be 0 or more")
    good, bad = _commit(args.good), _commit(args.bad)
    for ref, sha in ((args.good, good), (args.bad, bad)):
        if sha is None:
            parser.error(f"{ref!r} is not a commit of {REPO_ROOT}")
    assert good is not None and bad is not None
    if good == bad or _git("merge-base", "--is-ancestor", good, bad) is None:
        parser.error(f"--good {args.good} ({good[:12]}) is not an ancestor of --bad {args.bad} ({bad[:12]})")
    commits = (_git("rev-list", "--first-parent", "--reverse", bad, f"^{good}") or "").split()
    absent = missing_plugins(args.workers)
    if absent:
        print(
            f"pycodex compat bisect: {', '.join(absent)} missing: pip install -e '.[compat]'", file=sys.stderr
        )
        return 2
    try:
        against, relay = resolve_build(args.against), resolve_build("current")
    except BuildError as exc:
        print(f"pycodex compat bisect: {exc}", file=sys.stderr)
        return 2
    shared = tuple(dict.fromkeys(Path(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")))
    prober = _Prober(
        tuple(args.scenario or SCENARIOS),
        against,
        relay,
        not args.one_way,
        shared if args.shared_deps else (),
        args.logs.resolve(),
        args.workers,
        args.reruns,
    )
    print(f"bisecting {len(commits)} commit(s) after {good[:12]} up to {bad[:12]}", file=sys.stderr)
    return run_bisect(prober, good, commits, good_ref=args.good, bad_ref=args.bad, logs=prober.logs)


def run_bisect(
    probe: Callable[[str], Probe],
    good: str,
    commits: Sequence[str],
    *,
    good_ref: str,
    bad_ref: str,
    logs: Path,
) -> int:
    """Probe ``commits[-1]`` (bad) and ``good``, then search ``commits`` (oldest first, after ``good``);
    print the answer and return the exit status (``*_ref``: the refs as given, for the messages)."""
    checks = ((commits[-1], "bad", f"--bad {bad_ref}"), (good, "good", f"--good {good_ref}"))
    probes = {}
    for sha, expected, name in checks:
        probes[expected] = result = probe(sha)
        if result.verdict == "skip":
            print(f"pycodex compat bisect: {name} cannot be tested: {result.detail}", file=sys.stderr)
            return 1
        if result.verdict != expected:
            why = result.detail or "every cell with it passed"
            print(f"pycodex compat bisect: {name} is not {expected}: {why}", file=sys.stderr)
            return 1
    found = search(commits, probe)  # never probes commits[-1]: the search starts knowing it is bad
    for sha, result in found.probes.items():
        if result.verdict == "skip":
            print(f"skipped {sha[:12]} {_subject(sha)}: {result.detail}")
    if found.first_bad is None:
        print("cannot tell: skipped commits leave the first bad commit one of:")
        for sha in found.candidates:
            print(f"  {sha} {_subject(sha)}")
        return 1
    cause = (found.probes.get(found.first_bad) or probes["bad"]).detail
    print(f"first bad commit: {found.first_bad} {_subject(found.first_bad)}")
    print(f"cause: {cause}")
    print(f"logs: {logs / found.first_bad[:12]}")
    return 0
