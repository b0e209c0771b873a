""".github/workflows: ci.yml runs .ci/run; compat.yml's pair jobs leave out Codex-only pairs, share one
build cache that holds Codex binaries rather than npm trees, and the nightly run pits codex@latest against
this checkout. The compat matrix step is run for real (bash, with a scratch ``$GITHUB_OUTPUT``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compat_tests.summary import is_codex_only

yaml = pytest.importorskip("yaml", reason="PyYAML (the `test` extra) reads the workflows")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"


def _load(name: str) -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    return loaded


def _triggers(workflow: dict[Any, Any]) -> dict[str, Any]:
    triggers: dict[str, Any] = (
        workflow["on"] if "on" in workflow else workflow[True]
    )  # YAML 1.1: `on` is true
    return triggers


def _steps(job: dict[str, Any], uses: str) -> list[dict[str, Any]]:
    return [step for step in job["steps"] if str(step.get("uses", "")).startswith(uses)]


def _step(job: dict[str, Any], step_id: str) -> dict[str, Any]:
    return next(step for step in job["steps"] if step.get("id") == step_id)


def test_ci_runs_the_repository_test_command_on_push_and_pull_request() -> None:
    workflow = _load("ci.yml")
    assert {"push", "pull_request"} <= set(_triggers(workflow))
    (job,) = workflow["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    assert [step["run"].strip() for step in job["steps"] if "run" in step] == [".ci/run"]
    (python,) = _steps(job, "actions/setup-python")
    assert (python["with"]["python-version"], python["with"]["cache"]) == ("3.11", "pip")
    (node,) = _steps(job, "actions/setup-node")
    assert (node["with"]["node-version"], node["with"]["cache"]) == (20, "npm")


def test_every_compat_job_shares_one_cache_of_binaries_not_npm_trees() -> None:
    jobs = _load("compat.yml")["jobs"]
    (save,) = _steps(jobs["builds"], "actions/cache@")
    restores = [
        s for name in ("pair", "current-python") for s in _steps(jobs[name], "actions/cache/restore@")
    ]
    assert len(restores) == 2
    paths = save["with"]["path"].split()
    for restore in restores:
        assert restore["with"]["path"].split() == paths  # a different list is a different cache version
        assert restore["with"]["key"] == "${{ needs.builds.outputs.cache-key }}"
        assert restore["with"]["fail-on-cache-miss"] is True
    codex = [p for p in paths if "/codex-*/" in p]
    assert any(p.endswith("/bin/codex") for p in codex)
    assert all(
        not p.endswith(("/codex-*", "/node_modules", "/codex-*/")) and "*" not in Path(p).name for p in codex
    )
    cache_root = _load("compat.yml")["env"]["PYCODEX_COMPAT_CACHE"]
    assert all(p.startswith(cache_root + "/") for p in paths)
    key = _step(jobs["builds"], "key")["run"]
    assert "hashFiles('compat_tests/releases.txt'" in key and "codex_${versions}" in key


def test_pair_jobs_report_junit_and_the_summary_renders_it_and_fails_with_the_first_cause() -> None:
    jobs = _load("compat.yml")["jobs"]
    pair = jobs["pair"]
    assert pair["strategy"]["matrix"] == "${{ fromJSON(needs.builds.outputs.matrix) }}"
    assert pair["strategy"]["fail-fast"] is False
    run = next(step["run"] for step in pair["steps"] if "pycodex compat" in step.get("run", ""))
    assert '--app "$APP" --exec "$EXEC" --scenario $SCENARIOS' in run and "--junit" in run
    (upload,) = _steps(pair, "actions/upload-artifact")
    assert upload["if"] == "always()" and upload["with"]["name"].startswith("compat-pair-")
    summary = jobs["summary"]
    assert "pair" in summary["needs"] and summary["if"].startswith("always()")
    script = next(step["run"] for step in summary["steps"] if "run" in step)
    assert "compat_tests.summary render" in script and "--check" in script and "GITHUB_STEP_SUMMARY" in script
    assert any(
        s["with"].get("pattern") == "compat-pair-*" for s in _steps(summary, "actions/download-artifact")
    )


def _pairs_step(event: str, tmp_path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """Run the builds job's "Pairs" step as GitHub would for ``event``: (the jobs' matrix, its specs)."""
    script = _step(_load("compat.yml")["jobs"]["builds"], "pairs")["run"]
    output = tmp_path / f"{event}.output"
    env = {
        **os.environ,
        "GITHUB_EVENT_NAME": event,
        "GITHUB_OUTPUT": str(output),
        "PYTHONPATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for explicit in ("PYCODEX_COMPAT_APPS", "PYCODEX_COMPAT_EXECS", "PYCODEX_COMPAT_ALL", "PYCODEX_SLOW"):
        env.pop(explicit, None)  # the step's listing must not depend on the caller's matrix
    subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, check=True, timeout=120)
    values = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines())
    return json.loads(values["matrix"])["include"], values["specs"].split()


@pytest.mark.skipif(shutil.which("jq") is None, reason="the matrix step uses jq (GitHub's runners have it)")
def test_the_matrix_step_leaves_out_codex_only_pairs_and_the_nightly_uses_codex_latest(
    tmp_path: Path,
) -> None:
    full, specs = _pairs_step("push", tmp_path)
    assert full and not any(is_codex_only(job["app"], job["exec"]) for job in full)
    assert {"current", "codex@0.169.0", "pycodex@last"} <= set(specs)
    assert {"app": "current", "exec": "codex@0.169.0"}.items() <= next(
        job for job in full if (job["app"], job["exec"]) == ("current", "codex@0.169.0")
    ).items()
    nightly, specs = _pairs_step("schedule", tmp_path)
    assert {(job["app"], job["exec"]) for job in nightly} == {
        ("current", "codex@latest"),
        ("codex@latest", "current"),
    }
    assert "drift" in next(job for job in nightly if job["app"] == "current")["scenarios"].split()
    assert "codex@latest" in specs
    assert "schedule" in _triggers(_load("compat.yml"))
