"""Skills (issue 6): discovery of SKILL.md files, `skills/list`, and what the model is told about them.

Entry points: `SkillsCatalog` (own skills per cwd, `skills/list`), `parse_selected_roots` +
`discover_selected` (selected capability roots through a `SkillFileReader`), and the pure prompt helpers
`skills_sections` / `injections_for`.
"""

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

__all__ = [
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
    "discover_selected",
    "injections_for",
    "instructions_section",
    "mentioned_names",
    "parse_front_matter",
    "parse_selected_roots",
    "parse_skill_header",
    "selected_instructions_section",
    "skill_message",
    "skills_sections",
    "skills_to_inject",
]
