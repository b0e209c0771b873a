"""pycodex's own system skills: installed into CODEX_HOME/skills/.pycodex-system, listed with scope system,
refreshed only when they change, and Codex's `.system` folder is left alone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from app_server.skills.bundled import install_system_skills
from app_server.skills.frontmatter import parse_skill_header
from tests.support.appserver import AppServerClient

Start = Callable[..., Awaitable[AppServerClient]]
NAMES = ["code-review", "skill-creator", "skill-installer"]


def test_install_is_idempotent_and_repairs(tmp_path: Path) -> None:
    target = install_system_skills(tmp_path)
    assert target == tmp_path / "skills/.pycodex-system"
    assert sorted(p.parent.name for p in target.glob("*/SKILL.md")) == NAMES
    for path in target.glob("*/SKILL.md"):
        header = parse_skill_header(path.read_text())
        assert header.name == path.parent.name and header.description
    edited = target / "skill-creator/SKILL.md"
    edited.write_text("changed")
    install_system_skills(tmp_path)  # marker unchanged: the user's edit is not fought over
    assert edited.read_text() == "changed"
    (target / ".pycodex-system-skills.marker").write_text("stale")
    install_system_skills(tmp_path)
    assert edited.read_text() != "changed"


async def test_skills_list_shows_them(app_server: Start, codex_home: Path, workspace: Path) -> None:
    codex_own = codex_home / "skills/.system/imagegen"
    codex_own.mkdir(parents=True)
    (codex_own / "SKILL.md").write_text("---\nname: imagegen\ndescription: theirs\n---\n")
    client = await app_server()
    listing = await client.call("skills/list", {"cwds": [str(workspace)]})
    system = [(s["name"], s["scope"]) for s in listing["data"][0]["skills"] if s["scope"] == "system"]
    assert system == [(name, "system") for name in NAMES]
    assert (codex_own / "SKILL.md").read_text().endswith("theirs\n---\n")
