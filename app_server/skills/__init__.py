"""Skills (issue 6): discovery of SKILL.md files, `skills/list`, and what the model is told about them.

Wiring, in short:
* `skills/list`: `await catalog.list_for_cwds(cwds or [session_cwd], force_reload)` with one
  `SkillsCatalog(codex_home, project_root_markers)` per app-server.
* thread/start: `roots = parse_selected_roots(raw)` (ValueError names the bad field), then
  `selected = await discover_selected(roots, reader_for)`; `reader_for(environment_id)` returns
  `LocalSkillReader()` for the local environment, `EnvironmentSkillReader(env, client.canonicalize)` for an
  exec-server one, None for an unknown id.
* first request: `ContextInputs.skills_sections = skills_sections(skill_set.skills, selected.skills)`.
* every turn: after the user's message, one user message per text of
  `injections_for(input_items, skill_set.skills, selected.skills)`.
* with selected roots: add `skills_tool_spec()` to the tools and answer `function_call`s whose
  `namespace` is "skills" with `await SkillsTool(selected.skills, reader_for).call(name, arguments)`.
"""

from .agents_yaml import AgentsMetadata, parse_agents_yaml
from .catalog import SkillsCatalog
from .frontmatter import FrontMatterError, SkillHeader, parse_front_matter, parse_skill_header
from .model import SelectedRoot, SelectedSkill, Skill, SkillError, SkillLimits, SkillSet
from .prompt import (
    injections_for,
    instructions_section,
    mentioned_names,
    selected_instructions_section,
    skill_message,
    skills_sections,
    skills_to_inject,
)
from .reader import EnvironmentSkillReader, FsEntry, FsStat, LocalSkillReader, SkillFileReader
from .selected import SelectedSkills, discover_selected, parse_selected_roots
from .tool import SkillsTool, skills_tool_spec

__all__ = [
    "AgentsMetadata",
    "EnvironmentSkillReader",
    "FrontMatterError",
    "FsEntry",
    "FsStat",
    "LocalSkillReader",
    "SelectedRoot",
    "SelectedSkill",
    "SelectedSkills",
    "Skill",
    "SkillError",
    "SkillFileReader",
    "SkillHeader",
    "SkillLimits",
    "SkillSet",
    "SkillsCatalog",
    "SkillsTool",
    "discover_selected",
    "injections_for",
    "instructions_section",
    "mentioned_names",
    "parse_agents_yaml",
    "parse_front_matter",
    "parse_selected_roots",
    "parse_skill_header",
    "selected_instructions_section",
    "skill_message",
    "skills_sections",
    "skills_to_inject",
    "skills_tool_spec",
]
