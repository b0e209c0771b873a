"""Skills as a thread sees them: the local catalog for its cwd, its selected capability roots, what the
first request lists, what each turn injects, and the ``skills`` tool of selected roots.
"""

from __future__ import annotations

from typing import Any

from app_server.skills import (
    EnvironmentSkillReader,
    LocalSkillReader,
    SelectedSkills,
    SkillFileReader,
    SkillsCatalog,
    SkillsTool,
    discover_selected,
    injections_for,
    parse_selected_roots,
    skills_sections,
    skills_tool_spec,
)
from app_server.threads.state import ThreadRuntime
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["ThreadSkills"]


class ThreadSkills:
    """Per-thread skills state, kept in ``ThreadRuntime.services.skills``."""

    def __init__(self, catalog: SkillsCatalog) -> None:
        self._catalog = catalog
        self.local: tuple[Any, ...] = ()
        self.selected = SelectedSkills()
        self._readers: dict[str, SkillFileReader] = {}

    def reader_for(self, environment_id: str) -> SkillFileReader | None:
        return self._readers.get(environment_id)

    @staticmethod
    def parse_roots(raw: Any) -> list[Any]:
        """Validate ``selectedCapabilityRoots``; raises InvalidRequest naming the bad field."""
        if not raw:
            return []
        try:
            return parse_selected_roots(
                [r.model_dump(by_alias=True) if hasattr(r, "model_dump") else r for r in raw]
            )
        except ValueError as exc:
            raise InvalidRequest(f"Invalid request: {exc}") from None

    async def select_roots(self, thread: ThreadRuntime, raw: Any) -> None:
        """Read the skills of ``selectedCapabilityRoots`` through their environment's file methods."""
        roots = self.parse_roots(raw)
        if not roots:
            return
        self._readers = {"local": LocalSkillReader()}
        where = thread.services.environment
        environment = where.execution_environment
        if environment is not None and where.id != "local":
            client = getattr(environment, "client", None)
            canonicalize = getattr(client, "canonicalize", None)
            self._readers[where.id] = EnvironmentSkillReader(environment, canonicalize)
        self.selected = await discover_selected(roots, self.reader_for)

    async def refresh(self, thread: ThreadRuntime) -> None:
        """Re-read the local skills for the thread's cwd (a SKILL.md may have changed)."""
        skill_set = await self._catalog.skills_for_cwd(str(thread.settings.cwd), force_reload=True)
        self.local = tuple(s for s in skill_set.skills if s.enabled)  # disabled ones never reach the model

    def sections(self) -> list[str]:
        return skills_sections(self.local, self.selected.skills)

    def injections(self, inputs: list[JsonObj]) -> list[str]:
        return injections_for(inputs, self.local, self.selected.skills)

    def tools(self) -> list[JsonObj]:
        return [skills_tool_spec()] if self.selected.skills else []

    async def call_tool(self, name: str, arguments: str) -> str:
        return await SkillsTool(self.selected.skills, self.reader_for).call(name, arguments)
