"""``pycodex compat bisect``: the search itself (a fake probe: fast), the usage errors (fast), and, marked
slow, a real bisection of a throwaway ten-commit history that plants one breaking commit.

The throwaway history is a git repository in the test's temp dir whose first commit is this checkout's
files (as they are on disk, so the code under test is the harness being tested); the bisection runs from
that repository, so ``pycodex@COMMIT`` builds its commits.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compat_tests.bisect import Probe, Search, run_bisect, search

REPO = Path(__file__).resolve().parents[1]
RUN_TIMEOUT = 600  # the slow test builds six commits (seconds each with --shared-deps) and runs stdio on each
PLANTED_FILE = "app_server/tools/exec_tool.py"
#: The app-server's completed command item: its ``aggregatedOutput`` (inherited from the started item, and
#: set) becomes ``aggregatedOutputRenamed``.
PLANTED_FROM = 'item, status="completed" if exit_code == 0 else "failed", aggregatedOutput='
PLANTED_TO = (
    '{k: v for k, v in item.items() if k != "aggregatedOutput"}, '
    'status="completed" if exit_code == 0 else "failed", aggregatedOutputRenamed='
)


def _search(verdicts: str) -> tuple[Search, list[str]]:
    """Bisect commits named c0.. whose verdicts are the letters of ``verdicts`` (g, b, s); the probes made."""
    commits = [f"c{i}" for i in range(len(verdicts))]
    probed: list[str] = []
    names = {"g": "good", "b": "bad", "s": "skip"}

    def probe(sha: str) -> Probe:
        probed.append(sha)
        return Probe(names[verdicts[int(sha[1:])]], f"{sha} said so")

    return search(commits, probe), probed


@pytest.mark.parametrize("first_bad", range(9))
def test_the_search_finds_the_first_bad_commit_in_at_most_log2_probes(first_bad: int) -> None:
    found, probed = _search("g" * first_bad + "b" * (9 - first_bad))
    assert found.first_bad == f"c{first_bad}" and found.candidates == (f"c{first_bad}",)
    # Nine possible answers (c0..c8): ceil(log2(9)) probes; c8, known bad, is never probed.
    assert len(probed) <= 4 and "c8" not in probed
    assert set(found.probes) == set(probed)


def test_a_skipped_commit_is_stepped_over_and_named_when_it_leaves_the_answer_open() -> None:
    found, probed = _search("gggsgbbbb")  # c3 cannot be tested, c5 is the first bad one
    assert found.first_bad == "c5" and probed[0] == "c3" and found.probes["c3"].verdict == "skip"
    found, _ = _search("ggggsbbbb")  # c4 is untestable and right before the first bad commit c5
    assert found.first_bad is None and found.candidates == ("c4", "c5")
    found, probed = _search("sssssssss")
    assert found.first_bad is None and found.candidates == tuple(f"c{i}" for i in range(9))
    assert sorted(probed) == [f"c{i}" for i in range(8)]


@pytest.mark.parametrize(
    ("verdicts", "rc", "says"),
    [
        ("g" + "gggbbbbbb", 0, ["first bad commit: c4 ", "cause: c4 said so", "logs: /logs/c4"]),
        (
            "g" + "gggsbbbbb",
            1,
            ["cannot tell: skipped commits leave the first bad commit one of:", "  c4 ", "  c5 "],
        ),
        ("g" + "ggggggggg", 1, ["--bad B is not bad: every cell with it passed"]),
        ("b" + "bbbbbbbbb", 1, ["--good G is not good: c0 said so"]),
        ("s" + "bbbbbbbbb", 1, ["--good G cannot be tested: c0 said so"]),
    ],
)
def test_the_bisection_checks_both_ends_then_names_the_first_bad_commit_and_its_cause(
    capsys: pytest.CaptureFixture[str], verdicts: str, rc: int, says: list[str]
) -> None:
    """``verdicts``: the good commit's, then those of the commits after it (the last one is --bad)."""
    names = {"g": "good", "b": "bad", "s": "skip"}
    probed: list[str] = []

    def probe(sha: str) -> Probe:
        probed.append(sha)
        verdict = names[verdicts[int(sha[1:])]]
        return Probe(verdict, "" if verdict == "good" else f"{sha} said so")

    commits = [f"c{i}" for i in range(1, len(verdicts))]
    assert run_bisect(probe, "c0", commits, good_ref="G", bad_ref="B", logs=Path("/logs")) == rc
    out = capsys.readouterr()
    lines = (out.out + out.err).splitlines()
    for said in says:
        assert any(said in line for line in lines), (said, lines)
    assert probed[0] == commits[-1] and probed.count(commits[-1]) == 1  # bad first, and only once
    if verdicts.endswith("g"):
        assert probed == [commits[-1]]  # a --bad that is not bad stops before anything else is built


def _compat(cwd: Path, *args: str, cache: Path | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYCODEX_COMPAT_", "PYCODEX_SLOW"))}
    env["PYTHONPATH"] = str(cwd)
    if cache is not None:
        env["PYCODEX_COMPAT_CACHE"] = str(cache)
    argv = [sys.executable, "-m", "pycodex", "compat", "bisect", *args]
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--good", "no-such-ref", "--bad", "HEAD"], "'no-such-ref' is not a commit of"),
        (["--good", "HEAD", "--bad", "HEAD~1"], "is not an ancestor of --bad HEAD~1"),
        (["--good", "HEAD", "--bad", "HEAD"], "is not an ancestor of --bad HEAD"),
        (["--good", "HEAD~1", "--bad", "HEAD", "--against", "npm@1"], "bad build spec 'npm@1'"),
        (["--good", "HEAD~1", "--bad", "HEAD", "--scenario", "nope"], "invalid choice: 'nope'"),
        (["--bad", "HEAD"], "the following arguments are required: --good"),
    ],
)
def test_bad_usage_exits_2_with_the_reason_before_building_anything(
    tmp_path: Path, args: list[str], reason: str
) -> None:
    rc, out = _compat(REPO, *args, "--logs", str(tmp_path / "logs"), cache=tmp_path / "cache")
    assert rc == 2, out
    assert reason in out, out
    assert not (tmp_path / "cache").exists() and not (tmp_path / "logs").exists(), out


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(
        repo,
        "-c",
        "user.name=compat",
        "-c",
        "user.email=compat@example.invalid",
        "commit",
        "-q",
        "-m",
        message,
    )
    return _git(repo, "rev-parse", "HEAD")


def _throwaway_history(repo: Path) -> list[str]:
    """Ten commits: this checkout, three harmless ones, one whose pyproject.toml cannot build, its fix,
    the planted break (the app-server renames ``aggregatedOutput``), three harmless ones. Their hashes."""
    repo.mkdir()
    _git(repo, "init", "-q")
    files = _git(REPO, "ls-files", "-co", "--exclude-standard", "-z").split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    note = repo / "BISECT_NOTE.txt"
    commits = [_commit(repo, "a copy of the checkout")]
    for i in range(1, 4):
        note.write_text(f"harmless {i}\n")
        commits.append(_commit(repo, f"harmless {i}"))
    pyproject = repo / "pyproject.toml"
    good_pyproject = pyproject.read_text()
    pyproject.write_text(good_pyproject.replace("[project]", "[project", 1))
    commits.append(_commit(repo, "pyproject.toml that cannot be parsed"))
    pyproject.write_text(good_pyproject)
    commits.append(_commit(repo, "pyproject.toml fixed"))
    planted = repo / PLANTED_FILE
    assert PLANTED_FROM in planted.read_text()  # the planted change still has something to change
    planted.write_text(planted.read_text().replace(PLANTED_FROM, PLANTED_TO))
    commits.append(_commit(repo, "the planted break: aggregatedOutput renamed"))
    for i in range(4, 7):
        note.write_text(f"harmless {i}\n")
        commits.append(_commit(repo, f"harmless {i}"))
    return commits


@pytest.mark.slow
@pytest.mark.timeout(3 * RUN_TIMEOUT)  # three bisections, each bounded by RUN_TIMEOUT
def test_bisect_finds_the_planted_commit_of_a_throwaway_history(tmp_path: Path) -> None:
    repo, cache = tmp_path / "history", tmp_path / "cache"
    commits = _throwaway_history(repo)
    common = ("--scenario", "stdio", "--against", "current", "--shared-deps", "-n", "0")
    rc, out = _compat(
        repo, "--good", commits[0], "--bad", "HEAD", *common, "--logs", str(tmp_path / "a"), cache=cache
    )
    assert rc == 0, out
    assert f"first bad commit: {commits[6]} the planted break: aggregatedOutput renamed" in out, out
    assert "cause: stdio app=pycodex@" in out and "item/completed params.item.aggregatedOutput missing" in out, out
    assert f"skipped {commits[4][:12]} pyproject.toml that cannot be parsed: cannot build: " in out, out
    assert (
        "pip install of the export failed"
        in (tmp_path / "a" / commits[4][:12] / "build-error.txt").read_text()
    )
    probed = [line.split()[1] for line in out.splitlines() if line.startswith("probing ")]
    assert len(probed) <= 7 and commits[9][:12] in probed and commits[0][:12] in probed, out
    record = json.loads((cache / f"pycodex-{commits[6][:12]}-shared" / "build.json").read_text())
    assert record["commit"] == commits[6] and record["shared_site"], record  # built, kept apart

    rc, out = _compat(
        repo, "--good", commits[7], "--bad", "HEAD", *common, "--logs", str(tmp_path / "b"), cache=cache
    )
    assert rc == 1, out
    assert f"--good {commits[7]} is not good: stdio app=pycodex@{commits[7]}" in out, out

    rc, out = _compat(
        repo, "--good", commits[0], "--bad", commits[3], *common, "--logs", str(tmp_path / "c"), cache=cache
    )
    assert rc == 1, out
    assert f"--bad {commits[3]} is not bad: every cell with it passed" in out, out
