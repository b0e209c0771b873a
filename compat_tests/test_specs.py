"""Build specs without the network: parsing, the release list, and ``pycodex compat`` exiting 2 (with the
whole reason) on a spec it cannot build, including a failed npm install (a fake ``npm`` on PATH)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat_tests.report import Cell, render_table
from compat_tests.support.builds import REPO_ROOT, Build, BuildError, parse_spec, releases, resolve_build
from compat_tests.support.matrix import full_builds

REPO = Path(__file__).resolve().parents[1]
RUN_TIMEOUT = 60
FAKE_NPM_ERROR = [
    "npm error code ETARGET",
    "npm error notarget No matching version found for @openai/codex@notaversion.",
    "npm error notarget In most cases you or one of your dependencies are requesting a package version.",
    "npm error A complete log of this run can be found in: /fake/debug-0.log",
]


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("current", ("current", "")),
        ("pycodex@0.2.0", ("pycodex", "0.2.0")),
        ("pycodex@last", ("pycodex", "last")),
        ("pycodex@3d24172", ("pycodex", "3d24172")),
        ("codex@latest", ("codex", "latest")),
        ("codex@0.171.0", ("codex", "0.171.0")),
        ("path:/usr/bin/true", ("path", "/usr/bin/true")),
    ],
)
def test_a_spec_parses_into_its_kind_and_argument(spec: str, parsed: tuple[str, str]) -> None:
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize(
    "spec", ["", "codex@", "codex@-x", "pycodex@--output=x", "codex@1 2", "path:relative/bin", "npm@1.0"]
)
def test_a_malformed_spec_is_refused_with_the_accepted_forms(spec: str) -> None:
    with pytest.raises(ValueError, match="expected current, pycodex@REF"):
        parse_spec(spec)


def test_each_release_is_a_commit_of_this_history_labelled_with_its_own_version() -> None:
    """releases.txt lists releases oldest first; each is a commit here whose pyproject.toml says that
    version (a label the code does not bear would be a release that is not one); all are in --all."""
    listed = releases()
    versions = [tuple(int(part) for part in version.split(".")) for version, _ in listed]
    assert versions == sorted(set(versions)) and listed[0][0] == "0.1.0"
    for version, commit in listed:
        assert len(commit) == 40
        pyproject = subprocess.run(["git", "-C", str(REPO_ROOT), "show", f"{commit}:pyproject.toml"],
                                   capture_output=True, text=True, check=True, timeout=30).stdout  # fmt: skip
        assert f'version = "{version}"' in pyproject, (version, commit)
    assert {f"pycodex@{version}" for version, _ in listed} <= set(full_builds())


def test_a_ref_that_is_not_a_commit_raises_naming_the_ref_and_the_releases() -> None:
    with pytest.raises(BuildError) as caught:
        resolve_build("pycodex@no-such-ref")
    assert "'no-such-ref' is not a commit of this repository" in str(caught.value)
    version, commit = releases()[-1]
    assert f"{version} ({commit[:7]})" in str(caught.value)


def test_the_report_names_what_each_moving_spec_resolved_to(tmp_path: Path) -> None:
    cells = [Cell("stdio", "codex@latest", "codex@latest", "pass", "", tmp_path)]
    labels = {
        "current": Build("current", ("x",)).label,
        "codex@latest": Build("codex@latest", ("x",), "0.171.0").label,
        "pycodex@last": Build("pycodex@last", ("x",), "0.2.0 (3d24172)").label,
    }
    lines = render_table(cells, ["stdio"], labels).splitlines()
    assert lines[:2] == ["build codex@latest → 0.171.0", "build pycodex@last → 0.2.0 (3d24172)"]
    assert not any(line.startswith("build current") for line in lines)


def _compat(tmp_path: Path, *args: str, path_prefix: Path | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYCODEX_COMPAT_", "PYCODEX_SLOW"))}
    env["PYTHONPATH"] = str(REPO)
    env["PYCODEX_COMPAT_CACHE"] = str(tmp_path / "cache")  # empty: nothing is served from a cache
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env.get('PATH', '')}"
    argv = [sys.executable, "-m", "pycodex", "compat", *args, "-n", "0", "--logs", str(tmp_path / "logs")]
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )
    return done.returncode, done.stdout + done.stderr


def test_a_failed_npm_install_exits_2_with_npms_whole_error_and_runs_nothing(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    npm = fake / "npm"
    lines = "\n".join(f"echo '{line}' >&2" for line in FAKE_NPM_ERROR)
    npm.write_text(f"#!/bin/sh\n{lines}\nexit 1\n")
    npm.chmod(0o755)
    rc, out = _compat(tmp_path, "--exec", "codex@notaversion", "--scenario", "stdio", path_prefix=fake)
    assert rc == 2, out
    assert "codex@notaversion: npm install failed:" in out, out
    for line in FAKE_NPM_ERROR:  # every line, the first (the cause) as well as the last
        assert line in out, out
    assert not (tmp_path / "logs" / "pytest.log").exists(), out  # nothing ran
    assert not (tmp_path / "cache" / "codex-notaversion").exists()  # and nothing looks cached


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("pycodex@no-such-ref", "pycodex@no-such-ref: 'no-such-ref' is not a commit of this repository"),
        ("path:/no/such/bin", "path:/no/such/bin: no executable file at /no/such/bin"),
        ("codex@-x", "bad build spec 'codex@-x'"),
    ],
)
def test_a_spec_that_cannot_be_built_exits_2_with_its_reason(tmp_path: Path, spec: str, reason: str) -> None:
    rc, out = _compat(tmp_path, "--app", spec, "--scenario", "stdio")
    assert rc == 2, out
    assert reason in out, out
    assert "SKIP" not in out, out
