"""A pycodex release built from scratch by ``pycodex compat``: the venv runs the release commit's code (not
this checkout's), the cache is keyed by commit, and a venv that stops matching the export is refused.

The release is the oldest one in releases.txt (0.1.0): its code certainly differs from the checkout's, which
is what lets the test tell the two apart (the newest release may be the checkout's own code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from compat_tests.support.builds import BuildMismatch, _export, _verify, releases

pytestmark = [pytest.mark.compat, pytest.mark.slow, pytest.mark.timeout(960)]
REPO = Path(__file__).resolve().parents[1]
VERSION, RELEASE = releases()[0]
#: A module that changed after that release, so the checkout's copy and the release's differ.
CHANGED = "app_server/router.py"
RUN_TIMEOUT = 900.0  # a cold build installs every dependency into a fresh venv


@pytest.fixture(scope="module")
def release_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    """``pycodex compat --app pycodex@VERSION --scenario stdio`` with an empty cache: (rc, output, the venv)."""
    tmp = tmp_path_factory.mktemp("release")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYCODEX_COMPAT_", "PYCODEX_SLOW"))}
    env["PYTHONPATH"] = str(REPO)  # what `pycodex compat` itself sets: the release must not see it
    env["PYCODEX_COMPAT_CACHE"] = str(tmp / "cache")
    argv = [sys.executable, "-m", "pycodex", "compat", "--app", f"pycodex@{VERSION}", "--scenario", "stdio"]
    argv += ["-n", "0", "--logs", str(tmp / "logs")]
    done = subprocess.run(
        argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )
    return done.returncode, done.stdout + done.stderr, tmp / "cache" / f"pycodex-{RELEASE[:12]}"


def _git_show(path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(REPO), "show", f"{RELEASE}:{path}"], capture_output=True, check=True, timeout=30
    ).stdout


def test_the_release_builds_and_passes_the_stdio_scenario(release_run: tuple[int, str, Path]) -> None:
    rc, out, root = release_run
    assert rc == 0, out
    assert f"build pycodex@{VERSION} → {RELEASE[:7]}" in out, out
    assert f"pycodex@{VERSION}  pycodex@{VERSION}  pass" in out, out
    record = json.loads((root / "build.json").read_text())
    export_version = _git_show("pyproject.toml").decode().split('version = "', 1)[1].split('"', 1)[0]
    assert record["commit"] == RELEASE and record["version"] == export_version


def test_the_release_venv_imports_the_tagged_code_not_the_checkout(
    release_run: tuple[int, str, Path],
) -> None:
    rc, out, root = release_run
    assert rc == 0, out
    venv = root / "venv"
    probe = "import json, pycodex, app_server.router as r; print(json.dumps([pycodex.__file__, r.__file__]))"
    # Run it as the harness runs a release: from the checkout, with the checkout on PYTHONPATH.
    done = subprocess.run(
        ["env", "-u", "PYTHONPATH", str(venv / "bin" / "python"), "-c", probe],
        cwd=tempfile.gettempdir(),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    package, router = (Path(p) for p in json.loads(done.stdout))
    assert package.is_relative_to(venv) and router.is_relative_to(venv), done.stdout
    release_copy = _git_show(CHANGED)
    assert release_copy != (REPO / CHANGED).read_bytes()  # else this test could not tell them apart
    assert router.read_bytes() == release_copy


def test_a_venv_that_no_longer_matches_the_export_is_refused_naming_the_file(
    release_run: tuple[int, str, Path], tmp_path: Path
) -> None:
    rc, out, root = release_run
    assert rc == 0, out
    venv = root / "venv"
    installed = next((venv / "lib").glob(f"python*/site-packages/{CHANGED}"))
    original = installed.read_bytes()
    installed.write_bytes((REPO / CHANGED).read_bytes())  # the checkout's code where the release's belongs
    try:
        with pytest.raises(BuildMismatch, match=f"differ from the export, e.g. {CHANGED}"):
            _verify(_export(RELEASE, tmp_path), venv)
    finally:
        installed.write_bytes(original)
    assert _verify(_export(RELEASE, tmp_path / "again"), venv)["version"]
