"""No test depends on what lies above the temp folder (tests/support/hermetic.py).

The tests whose product code walks up out of their folder (project root markers, AGENTS.md, `.codex` and
`.agents` skills, parent `.gitignore` files, `pycodex exec`'s Git check) run again in a child pytest whose
temp folder sits inside a folder holding all of those: a `.git`, an AGENTS.md, `.codex/config.toml`, repo
skills and a `.gitignore` that ignores everything. They pass there too (the Git check's test sets git's own
`GIT_CEILING_DIRECTORIES`, which `pycodex exec` honours).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.support.procs import spawn, stop_process
from tests.support.schema import REPO_ROOT

#: The tests that read above their folder when nothing stops them (the `codex`-marked twins are left out).
WALKING = [
    "tests/app_server/skills/test_skills_catalog.py",
    "tests/app_server/surface/test_fuzzy_search.py",
    "tests/app_server/surface/test_fuzzy_cancellation.py",
    "tests/app_server/turns/test_turns_prompt.py",
    # `pycodex exec`'s Git check, kept inside the test's folder by GIT_CEILING_DIRECTORIES.
    "tests/pycodex/test_exec_cli.py::test_exit_codes_for_model_errors_usage_errors_and_git_check",
]
SKILL = "---\nname: {0}\ndescription: A skill above the temp folder.\n---\nDo not list me.\n"


def _litter(above: Path) -> None:
    """Everything a walk up from the temp folder could pick up."""
    (above / ".git" / "info").mkdir(parents=True)
    (above / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (above / ".git" / "info" / "exclude").write_text("*\n")
    (above / ".gitignore").write_text("*\n")
    (above / "AGENTS.md").write_text("AGENTS.md from above the temp folder.\n")
    (above / ".codex").mkdir()
    (above / ".codex" / "config.toml").write_text('model = "from-above-the-temp-folder"\n')
    for folder in (".agents/skills/above", ".codex/skills/above-legacy"):
        (above / folder).mkdir(parents=True)
        (above / folder / "SKILL.md").write_text(SKILL.format(Path(folder).name))


async def _pytest(base: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYCODEX_TEST_"))}
    runner = await spawn(
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-m", "not codex",
        f"--basetemp={base}", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env, cwd=str(REPO_ROOT),
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(runner.communicate(), 240)
    finally:
        await stop_process(runner)
    return out.decode("utf-8", "replace")


async def test_the_walking_tests_pass_with_a_repository_and_agents_md_above_their_temp_folder(
    tmp_path: Path,
) -> None:
    _litter(tmp_path)
    report = await _pytest(tmp_path / "base", *WALKING)
    last = report.strip().splitlines()[-1]
    assert " passed" in last and "failed" not in last and "error" not in last, report[-4000:]
