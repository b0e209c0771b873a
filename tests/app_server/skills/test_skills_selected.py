"""Selected capability roots: the param, discovery through the reader interface (in memory, local,
our exec-server and Codex's), and the seed 003 scenario end to end at the prompt level."""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from app_server.skills import (
    EnvironmentSkillReader,
    FsEntry,
    FsStat,
    LocalSkillReader,
    SelectedRoot,
    SkillFileReader,
    SkillLimits,
    SkillsCatalog,
    discover_selected,
    injections_for,
    parse_selected_roots,
    skills_sections,
)
from app_server.skills.reader import SkillEntry, SkillStat
from exec_client.client import ExecServerClient
from exec_client.environment import ExecServerEnvironment
from exec_client.local_environment import LocalEnvironment
from tests.support.execserver import run_ws_server, server_params


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill_text(name: str, description: str = "d", body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body or name + ' body'}\n"


def root_entry(root_id: str, path: Path | str, environment_id: str = "local") -> dict[str, object]:
    return {
        "id": root_id,
        "location": {"type": "environment", "environmentId": environment_id, "path": str(path)},
    }


# ---- the param --------------------------------------------------------------------------------


def test_roots_parse_into_id_environment_and_normalized_path() -> None:
    roots = parse_selected_roots([root_entry("demo@1", "/cap/"), root_entry("x", "/a//b", "remote")])
    assert roots == [SelectedRoot("demo@1", "local", "/cap"), SelectedRoot("x", "remote", "/a/b")]
    assert roots[0].locator == "skill://demo@1/cap"
    assert parse_selected_roots(None) == []


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "selectedCapabilityRoots must be an array"),
        ([1], "selectedCapabilityRoots[0] must be an object"),
        ([{"location": {}}], "selectedCapabilityRoots[0].id must be a non-empty string"),
        ([{"id": "a/b", "location": {}}], "selectedCapabilityRoots[0].id must not contain `/` or whitespace"),
        ([{"id": "a"}], "selectedCapabilityRoots[0].location must be an object"),
        (
            [{"id": "a", "location": {"type": "plugin"}}],
            "location.type must be \"environment\", not 'plugin'",
        ),
        ([root_entry("a", "")], "selectedCapabilityRoots[0].location.path must be a non-empty string"),
        ([root_entry("a", "rel/dir")], "location.path must be absolute: 'rel/dir'"),
        ([root_entry("a", "/x/../etc")], "location.path must not contain `..`"),
        (
            [root_entry("a", "/x"), root_entry("a", "/y")],
            "selectedCapabilityRoots[1].id duplicates an earlier root",
        ),
    ],
)
def test_bad_roots_are_refused_with_the_field_named(raw: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_selected_roots(raw)
    assert message in str(caught.value)


# ---- discovery through the interface ----------------------------------------------------------


class MemoryReader:
    """A filesystem held in a dict: proves discovery needs nothing but the four interface methods."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = {Path(k): v.encode() for k, v in files.items()}
        self.dirs = {parent for path in self.files for parent in path.parents}

    async def read_file(self, path: Path) -> bytes:
        if path not in self.files:
            raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
        return self.files[path]

    async def list_dir(self, path: Path) -> Sequence[SkillEntry]:
        if path not in self.dirs:
            raise FileNotFoundError(errno.ENOENT, "no such directory", str(path))
        children = {p for p in (*self.files, *self.dirs) if p.parent == path and p != path}
        return [FsEntry(p.name, p in self.dirs, p in self.files) for p in children]

    async def stat(self, path: Path) -> SkillStat:
        if path in self.files:
            return FsStat(False, True, False, len(self.files[path]))
        if path in self.dirs:
            return FsStat(True, False, False, 0)
        raise FileNotFoundError(errno.ENOENT, "no such path", str(path))

    async def canonicalize(self, path: Path) -> Path:
        raise NotImplementedError


async def test_discovery_walks_the_whole_root_breadth_first_through_any_reader() -> None:
    reader = MemoryReader(
        {
            "/cap/SKILL.md": skill_text("rootskill"),
            "/cap/a/b/c/deep/SKILL.md": skill_text("deep"),
            "/cap/skills/capskill/SKILL.md": skill_text("capskill"),
            "/cap/direct/SKILL.md": skill_text("direct"),
            "/cap/.hid/SKILL.md": skill_text("hid"),
            "/cap/bad/SKILL.md": "no front matter\n",
        }
    )
    assert isinstance(reader, SkillFileReader)
    found = await discover_selected([SelectedRoot("c1", "env", "/cap")], lambda env: reader)
    assert [(s.name, s.package_dir) for s in found.skills] == [
        ("rootskill", ""),
        ("hid", ".hid"),
        ("direct", "direct"),
        ("capskill", "skills/capskill"),
        ("deep", "a/b/c/deep"),
    ]
    assert [(e.path, e.message) for e in found.errors] == [
        ("/cap/bad/SKILL.md", "missing YAML frontmatter delimited by ---")
    ]
    assert found.skills[3].contents == skill_text("capskill")


async def test_an_unknown_environment_or_a_missing_root_is_reported_or_skipped() -> None:
    reader = MemoryReader({"/cap/x/SKILL.md": skill_text("x")})
    roots = [SelectedRoot("gone", "nowhere", "/cap"), SelectedRoot("empty", "env", "/missing")]
    found = await discover_selected(roots, lambda env: reader if env == "env" else None)
    assert found.skills == ()
    assert [(e.path, e.message) for e in found.errors] == [
        ("/cap", "unknown environment `nowhere` for root `gone`")
    ]


async def test_selected_roots_share_one_skill_cap(tmp_path: Path) -> None:
    for i in range(3):
        write(tmp_path / f"one/s{i}/SKILL.md", skill_text(f"one{i}"))
        write(tmp_path / f"two/s{i}/SKILL.md", skill_text(f"two{i}"))
    roots = parse_selected_roots([root_entry("a", tmp_path / "one"), root_entry("b", tmp_path / "two")])
    found = await discover_selected(roots, lambda env: LocalSkillReader(), SkillLimits(max_skills=4))
    assert [s.name for s in found.skills] == ["one0", "one1", "one2", "two0"]
    assert [e.message for e in found.errors] == ["too many skills: only the first 4 are loaded"]


async def test_without_canonicalize_every_symlink_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "cap/real/SKILL.md", skill_text("real"))
    (tmp_path / "cap/alias").symlink_to(tmp_path / "cap/real")
    env = LocalEnvironment()
    try:
        reader = EnvironmentSkillReader(env)
        found = await discover_selected(
            parse_selected_roots([root_entry("c", tmp_path / "cap")]), lambda e: reader
        )
    finally:
        await env.close()
    assert [s.name for s in found.skills] == ["real"]
    assert [(e.path, e.message) for e in found.errors] == [
        (str(tmp_path / "cap/alias"), "refusing symlink: this environment cannot resolve it")
    ]


@pytest.fixture(params=server_params())
async def remote_reader(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SkillFileReader]:
    """A reader over a real exec-server (ours, and Codex 0.169.0's when installed) on loopback."""
    (tmp_path / "server").mkdir()
    with run_ws_server(request.param, tmp_path / "server") as server:
        client = await ExecServerClient.connect_websocket(server.url)
        await client.initialize()
        env = ExecServerEnvironment(client)
        try:
            yield EnvironmentSkillReader(env, client.canonicalize)
        finally:
            await env.close()


async def test_discovery_over_an_exec_server_finds_skills_and_refuses_escapes(
    remote_reader: SkillFileReader, tmp_path: Path
) -> None:
    root = tmp_path / "selected-skills"
    write(
        root / "selected-version-skew/SKILL.md", skill_text("selected-version-skew", "Check selected skills.")
    )
    write(root / "nested/inner/SKILL.md", skill_text("inner"))
    write(tmp_path / "outside/SKILL.md", skill_text("outside"))
    (root / "escape").symlink_to(tmp_path / "outside")
    (root / "again").symlink_to(root / "nested")
    write(root / "big/SKILL.md", skill_text("big", body="x" * 70_000))
    found = await discover_selected(parse_selected_roots([root_entry("r", root)]), lambda env: remote_reader)
    assert [(s.name, s.package_dir) for s in found.skills] == [
        ("selected-version-skew", "selected-version-skew"),
        ("inner", "nested/inner"),
    ]
    assert found.skills[0].path == f"skill://r{root}/selected-version-skew/SKILL.md"
    errors = {e.path: e.message for e in found.errors}
    assert set(errors) == {str(root / "escape"), str(root / "big/SKILL.md")}
    assert errors[str(root / "escape")].startswith("refusing symlink that escapes the skills root")
    assert errors[str(root / "big/SKILL.md")].startswith("SKILL.md is too large: ")


# ---- seed 003 ---------------------------------------------------------------------------------


async def test_seed_003_the_first_request_names_the_selected_skill_and_carries_both_bodies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    skill_body = "Repository instructions loaded across executor versions."
    skill_path = write(
        workspace / ".agents/skills/version-skew/SKILL.md",
        f"---\nname: version-skew\ndescription: Check executor compatibility.\n---\n{skill_body}\n",
    )
    selected_body = "Selected instructions loaded across executor versions."
    write(
        workspace / "selected-skills/selected-version-skew/SKILL.md",
        "---\nname: selected-version-skew\ndescription: Check selected skill compatibility.\n---\n"
        f"{selected_body}\n",
    )
    local = await SkillsCatalog(home).skills_for_cwd(workspace)
    roots = parse_selected_roots(
        [root_entry("version-skew-selected", workspace / "selected-skills", "remote")]
    )
    found = await discover_selected(roots, lambda env: LocalSkillReader() if env == "remote" else None)
    developer_parts = skills_sections(local.skills, found.skills)
    assert any("selected-version-skew" in part for part in developer_parts)
    items = [
        {"type": "text", "text": "Use $selected-version-skew and run the Noise compatibility command."},
        {"type": "skill", "name": "version-skew", "path": str(skill_path)},
    ]
    messages = injections_for(items, local.skills, found.skills)
    assert len(messages) == 2
    assert skill_body in messages[0] and f"<path>{skill_path}</path>" in messages[0]
    assert selected_body in messages[1]
    assert (
        f"<path>skill://version-skew-selected{workspace}/selected-skills/selected-version-skew/SKILL.md</path>"
        in (messages[1])
    )
