"""Side by side with Codex 0.169.0: `skills/list` on the same workspace, and the skills part of the first
model request (the `<skill>` messages byte for byte, the advertised skills with their paths)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from app_server.skills import (
    SkillsCatalog,
    SkillsTool,
    discover_selected,
    injections_for,
    parse_selected_roots,
    skills_sections,
    skills_tool_spec,
)
from app_server.skills.reader import LocalSkillReader
from tests.support.appserver import AppServerClient
from tests.support.fake_model import FakeModel, model_config

pytestmark = pytest.mark.codex

TIMEOUT = 20.0


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def build_tree(tmp_path: Path) -> tuple[Path, Path]:
    """A git workspace (cwd one level down) and a CODEX_HOME with skills in every supported shape."""
    repo, home = tmp_path / "ws", tmp_path / "home"
    (repo / ".git").mkdir(parents=True)
    # A `.git` folder with HEAD: Codex only looks for `.codex/skills` above the cwd in what looks like a repo.
    (repo / ".git/HEAD").write_text("ref: refs/heads/main\n")
    (repo / "sub").mkdir()
    skills = repo / ".agents/skills"
    write(
        skills / "greeter/SKILL.md",
        "---\nname: greeter\ndescription: Greets people. Use when asked.\n---\nAhoy.\n",
    )
    write(
        skills / "dirname-differs/SKILL.md", "---\nname: other-name\ndescription: 'single: quoted'\n---\nb\n"
    )
    write(
        skills / "meta/SKILL.md",
        "---\nname: meta\ndescription: d\nmetadata:\n  short-description: Short\n---\n",
    )
    write(skills / "deep/nested/SKILL.md", "---\nname: deepnested\ndescription: deep\n---\nbody\n")
    write(skills / "folded/SKILL.md", "---\nname: folded\ndescription: >\n  line one\n  line two\n---\n")
    write(skills / "noname/SKILL.md", "---\ndescription: falls back to the directory\n---\n")
    write(skills / "crlf/SKILL.md", "---\r\nname: crlf\r\ndescription: windows endings\r\n---\r\nbody\r\n")
    write(skills / "nofm/SKILL.md", "no front matter\n")
    write(skills / "nodesc/SKILL.md", "---\nname: nodesc\n---\n")
    write(skills / "dupkey/SKILL.md", "---\nname: a\nname: b\ndescription: d\n---\n")
    write(skills / "binary/SKILL.md", b"---\nname: binary\ndescription: \xff\n---\n")
    write(skills / "longname/SKILL.md", "---\nname: " + "n" * 65 + "\ndescription: d\n---\n")
    write(skills / ".hidden/h/SKILL.md", "---\nname: hidden\ndescription: d\n---\n")
    write(
        skills / "ui/SKILL.md",
        "---\nname: ui\ndescription: Has a UI and is never advertised.\n---\nUI body\n",
    )
    write(
        skills / "ui/agents/openai.yaml",
        'interface:\n  display_name: "UI Skill"\n  short_description: "Short UI"\n  icon_small: "./assets/s.svg"\n'
        '  brand_color: "#3B82F6"\ndependencies:\n  tools:\n    - type: "mcp"\n      value: "github"\n'
        '      description: "GitHub MCP server"\npolicy:\n  allow_implicit_invocation: false\n',
    )
    write(skills / "badyaml/SKILL.md", "---\nname: badyaml\ndescription: unusable openai.yaml\n---\n")
    write(skills / "badyaml/agents/openai.yaml", "interface: [oops\n")
    write(
        repo / "sub/.agents/skills/subskill/SKILL.md",
        '---\nname: subskill\ndescription: "Sub: quoted"\n---\nSub.\n',
    )
    write(home / "skills/u1/SKILL.md", "---\nname: u1\ndescription: user one\n---\nU1 body\n")
    write(home / "skills/group/u2/SKILL.md", "---\nname: u2\ndescription: user two\n---\nU2 body\n")
    write(repo / ".codex/skills/legacy/SKILL.md", "---\nname: legacy\ndescription: old folder\n---\nL\n")
    write(Path.home() / ".agents/skills/homeskill/SKILL.md", "---\nname: homeskill\ndescription: h\n---\nH\n")
    return repo, home


@pytest.fixture(autouse=True)
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A $HOME of our own, for Codex and for us alike (both read `$HOME/.agents/skills`)."""
    path = tmp_path / "user_home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
async def codex(
    codex_bin: Path,
) -> AsyncIterator[Callable[[Path, Path], Awaitable[AppServerClient]]]:
    started: list[AppServerClient] = []

    async def start(home: Path, cwd: Path) -> AppServerClient:
        client = await AppServerClient.spawn(
            None, codex_home=home, cwd=cwd, argv=[str(codex_bin), "app-server"], label="codex"
        )
        started.append(client)
        await client.initialize(experimental=True)
        return client

    yield start
    for client in started:
        await client.close()


def own(entry: dict[str, Any]) -> dict[str, Any]:
    """A skills/list entry without the bundled system skills (each server ships its own)."""
    return {**entry, "skills": [s for s in entry["skills"] if s["scope"] != "system"]}


async def test_skills_list_matches_codex_on_the_same_workspace(
    codex: Callable[[Path, Path], Awaitable[AppServerClient]], tmp_path: Path
) -> None:
    repo, home = build_tree(tmp_path)
    plain = tmp_path / "plain/a"
    write(tmp_path / "plain/.agents/skills/parent/SKILL.md", "---\nname: parent\ndescription: d\n---\n")
    write(plain / ".agents/skills/here/SKILL.md", "---\nname: here\ndescription: d\n---\n")
    model_config(home, "http://127.0.0.1:9/v1")
    cwds = [str(repo / "sub"), str(repo), str(plain)]
    client = await codex(home, repo)
    theirs = await client.call("skills/list", {"cwds": cwds, "forceReload": True}, timeout=TIMEOUT)
    ours = await SkillsCatalog(home).list_for_cwds(cwds, force_reload=True)
    assert [own(e) for e in theirs["data"]] == [own(e) for e in ours["data"]]
    # The comparison saw real content: a deeper cwd's own skills, and the openai.yaml interface.
    assert any(s["name"] == "subskill" for s in ours["data"][0]["skills"])
    assert any(s.get("interface", {}).get("displayName") == "UI Skill" for s in ours["data"][0]["skills"])
    assert len(ours["data"][0]["errors"]) == 5


def _expand(section: str) -> list[tuple[str, str, str, str]]:
    """`(name, description, kind, full locator)` per advertised skill, with root aliases replaced."""
    roots = dict(re.findall(r"^- `([re]\d+)` = `([^`]+)`$", section, re.M))
    found = []
    for name, description, kind, short in re.findall(
        r"^- ([^:\n]+): (.*) \((file|executor package): ([^)]+)\)$", section, re.M
    ):
        alias, _, rest = short.partition("/")
        full = f"{roots[alias]}/{rest}" if alias in roots else short
        found.append((name, description, kind, full))
    return found


async def test_the_first_model_request_carries_the_same_skill_texts_as_codex(
    codex: Callable[[Path, Path], Awaitable[AppServerClient]], tmp_path: Path
) -> None:
    repo, home = build_tree(tmp_path)
    cap = tmp_path / "cap"
    write(
        cap / "skills/capskill/SKILL.md", "---\nname: capskill\ndescription: Capability skill.\n---\nCap.\n"
    )
    write(cap / "direct/SKILL.md", "---\nname: direct\ndescription: Direct child.\n---\nDirect.\n")
    model = await FakeModel.start(
        {"responses": [{"output": [{"type": "message", "text": "ok"}]}]}, tmp_path / "m"
    )
    try:
        model_config(home, model.url)
        roots_param = [
            {"id": "demo@1", "location": {"type": "environment", "environmentId": "local", "path": str(cap)}}
        ]
        cwd = repo / "sub"
        items = [
            {
                "type": "text",
                "text": "Use $capskill, $direct, $u1, $subskill, $ui and $Greeter.",
                "text_elements": [],
            },
            {"type": "skill", "name": "ignored", "path": str(repo / ".agents/skills/greeter/SKILL.md")},
        ]
        client = await codex(home, cwd)
        started = await client.call(
            "thread/start", {"cwd": str(cwd), "selectedCapabilityRoots": roots_param}, timeout=TIMEOUT
        )
        await client.call(
            "turn/start", {"threadId": started["thread"]["id"], "input": items}, timeout=TIMEOUT
        )
        await client.wait_notification("turn/completed", timeout=TIMEOUT)
        [request] = model.requests()
    finally:
        await model.stop()

    local = await SkillsCatalog(home).skills_for_cwd(cwd)
    selected = await discover_selected(parse_selected_roots(roots_param), lambda env: LocalSkillReader())
    texts = [
        (item["role"], part["text"])
        for item in request["body"]["input"]
        if item.get("type") == "message"
        for part in item["content"]
    ]
    their_skill_messages = [t for role, t in texts if role == "user" and t.startswith("<skill>")]
    ours = injections_for(items, local.skills, selected.skills)
    assert len(their_skill_messages) == len(ours) == 6
    # The skill item and the local mentions come in a fixed order; Codex's order among selected-root
    # skills varies from run to run, so that tail is compared as a set.
    assert their_skill_messages[:4] == ours[:4]
    assert sorted(their_skill_messages[4:]) == sorted(ours[4:])

    their_sections = [t for role, t in texts if role == "developer" and t.startswith("<skills_instructions>")]
    our_sections = skills_sections(local.skills, selected.skills)
    assert len(their_sections) == len(our_sections) == 2
    system_roots = (str(home / "skills/.system"), str(home / "skills/.pycodex-system"))
    their_local = [e for e in _expand(their_sections[0]) if not e[3].startswith(system_roots)]
    assert their_local == [e for e in _expand(our_sections[0]) if not e[3].startswith(system_roots)]
    # Not `ui`: its openai.yaml policy forbids implicit use (yet `$ui` above still injected it).
    expected = [
        "badyaml",
        "crlf",
        "deepnested",
        "folded",
        "greeter",
        "legacy",
        "meta",
        "noname",
        "other-name",
    ]
    expected += ["subskill", "homeskill", "u1", "u2"]
    assert [e[0] for e in their_local] == expected
    assert _expand(their_sections[1]) == _expand(our_sections[1])
    assert [e[0] for e in _expand(our_sections[1])] == ["capskill", "direct"]


def _strip_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_strip_descriptions(v) for v in value]
    return value


def _completed(response_id: str) -> dict[str, Any]:
    usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1}
    usage |= {"output_tokens_details": None, "total_tokens": 2}
    return {"type": "response.completed", "response": {"id": response_id, "usage": usage}}


async def test_the_skills_tool_answers_like_codex(
    codex: Callable[[Path, Path], Awaitable[AppServerClient]], tmp_path: Path
) -> None:
    home, cwd, cap = tmp_path / "home", tmp_path / "ws", tmp_path / "cap"
    cwd.mkdir()
    write(
        cap / "skills/capskill/SKILL.md", "---\nname: capskill\ndescription: Capability skill.\n---\nCap.\n"
    )
    write(cap / "skills/capskill/references/extra.md", "extra file contents\n")
    write(cap / "skills/capskill/bin.dat", bytes(range(256)))
    write(cap / "direct/SKILL.md", "---\nname: direct\ndescription: Direct child.\n---\nDirect.\n")
    base = f"skill://demo@1{cap}/skills/capskill"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list", {"authority": {"kind": "executor"}}),
        ("list", {"authority": {"kind": "cloud"}}),
        ("list", {}),
        ("read", {"package": "e0/skills/capskill"}),
        ("read", {"package": f"skill://demo@1{cap}/direct"}),
        ("read", {"package": "e0/skills/capskill", "resource": f"{base}/references/extra.md"}),
        ("read", {"package": "e0/skills/capskill", "resource": f"skill://demo@1{cap}/direct/SKILL.md"}),
        ("read", {"package": "e0/skills/capskill", "resource": f"{base}/../../direct/SKILL.md"}),
        ("read", {"package": "e0/skills/capskill", "resource": f"{base}/missing.md"}),
        ("read", {"package": "e0/skills/capskill", "resource": f"{base}/bin.dat"}),
        ("read", {"package": "e0/nope"}),
        ("read", {}),
    ]
    items = [
        {
            "type": "function_call",
            "namespace": "skills",
            "name": name,
            "call_id": f"c{i}",
            "arguments": json.dumps(a),
        }
        for i, (name, a) in enumerate(calls)
    ]
    first = [{"type": "response.created", "response": {"id": "r1"}}]
    first += [{"type": "response.output_item.done", "item": item} for item in items] + [_completed("r1")]
    script = {"responses": [{"events": first}, {"output": [{"type": "message", "text": "done"}]}]}
    model = await FakeModel.start(script, tmp_path / "m")
    try:
        model_config(home, model.url)
        roots_param = [
            {"id": "demo@1", "location": {"type": "environment", "environmentId": "local", "path": str(cap)}}
        ]
        client = await codex(home, cwd)
        started = await client.call(
            "thread/start", {"cwd": str(cwd), "selectedCapabilityRoots": roots_param}, timeout=TIMEOUT
        )
        go = [{"type": "text", "text": "go", "text_elements": []}]
        await client.call("turn/start", {"threadId": started["thread"]["id"], "input": go}, timeout=TIMEOUT)
        await client.wait_notification("turn/completed", timeout=TIMEOUT)
        requests = model.requests()
    finally:
        await model.stop()
    assert len(requests) == 2
    their_outputs = {
        item["call_id"]: item["output"]
        for item in requests[1]["body"]["input"]
        if item.get("type") == "function_call_output"
    }
    found = await discover_selected(parse_selected_roots(roots_param), lambda env: LocalSkillReader())
    tool = SkillsTool(found.skills, lambda env: LocalSkillReader())
    for i, (name, args) in enumerate(calls):
        ours = await tool.call(name, json.dumps(args))
        assert (
            json.loads(their_outputs[f"c{i}"]) == json.loads(ours)
            if ours.startswith("{")
            else (their_outputs[f"c{i}"] == ours)
        ), (name, args, their_outputs[f"c{i}"], ours)
    [their_spec] = [t for t in requests[0]["body"]["tools"] if t.get("name") == "skills"]
    assert _strip_descriptions(their_spec) == _strip_descriptions(skills_tool_spec())
