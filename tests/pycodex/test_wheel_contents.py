"""The wheel's import names and distribution name are decisions, not accidents.

PyPI already has projects with generic names (`relay`, `app-server`, `pycodex`), and installing one of them
beside ours broke pycodex. So the distribution is `pycodex-stack`, the command stays `pycodex`, and the wheel
may install only the top-level packages on the allow-list below (the layout keeps `relay/` and `agent_api/`).
Building a wheel takes several seconds (an isolated setuptools build), hence `slow`.
"""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.slow

ALLOWED_TOP_LEVEL = frozenset({"pycodex", "app_server", "exec_client", "exec_server", "relay", "agent_api"})
DISTRIBUTION = "pycodex_stack"  # `pycodex-stack`, normalized as wheels spell it


def _source_copy(dest: Path) -> Path:
    """What setuptools can see: the project files, every top-level package and module (not .venv, tests/data)."""
    dest.mkdir()
    for entry in REPO_ROOT.iterdir():
        if entry.is_dir() and (entry / "__init__.py").is_file():
            shutil.copytree(entry, dest / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
        elif entry.is_file() and entry.suffix in {".py", ".toml", ".cfg", ".md", ".txt", ".in"}:
            shutil.copy2(entry, dest / entry.name)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    root = tmp_path_factory.mktemp("wheel")
    source = _source_copy(root / "src")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(root / "out"), str(source)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (built,) = (root / "out").glob("*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_installs_only_the_allowed_top_level_packages(wheel: zipfile.ZipFile) -> None:
    top = {name.split("/")[0] for name in wheel.namelist()}
    packages = {t for t in top if not t.endswith((".dist-info", ".data"))}
    assert packages == ALLOWED_TOP_LEVEL, "a new top-level import name needs a decision (and this allow-list)"


def test_the_distribution_is_pycodex_stack_and_the_command_is_pycodex(wheel: zipfile.ZipFile) -> None:
    (info,) = {n.split("/")[0] for n in wheel.namelist() if n.split("/")[0].endswith(".dist-info")}
    assert info.startswith(f"{DISTRIBUTION}-")
    entry_points = configparser.ConfigParser()
    entry_points.read_string(wheel.read(f"{info}/entry_points.txt").decode())
    assert dict(entry_points["console_scripts"]) == {"pycodex": "pycodex.cli:main"}
