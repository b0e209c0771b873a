"""Skills as a thread sees them: the local catalog for its cwd, its selected capability roots, what the
first request lists, what each turn injects, and the ``skills`` tool of selected roots.

A thread is seen through ``SkillsThread`` (its cwd and its environment) rather than ``threads.state``, whose
``ThreadServices`` holds a ``ThreadSkills``: naming the state here would close an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from app_server.skills import (
    EnvironmentSkillReader,
    LocalSkillReader,
    SelectedRoot,
    SelectedSkills,
    Skill,
    SkillFileReader,
    SkillsCatalog,
    SkillsTool,
    discover_selected,
    injections_for,
    parse_selected_roots,
    skills_sections,
    skills_tool_spec,
)
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

if TYPE_CHECKING:
    from app_server.environments import ThreadEnvironment

__all__ = ["SkillsThread", "ThreadSkills"]


class _Settings(Protocol):
    @property
    def cwd(self) -> Path: ...


class _Services(Protocol):
    @property
    def environment(self) -> ThreadEnvironment: ...


class SkillsThread(Protocol):
    """What ``ThreadSkills`` reads of a thread (``threads.state.ThreadRuntime`` is one)."""

    @property
    def settings(self) -> _Settings:
        """The thread's settings; only ``cwd`` is read."""

    @property
    def services(self) -> _Services:
        """The thread's services; only ``environment`` is read."""


class ThreadSkills:
    """Per-thread skills state, kept in ``ThreadRuntime.services.skills``."""

    def __init__(self, catalog: Callable[[], SkillsCatalog]) -> None:
        # A callable: the server's catalog (which copies pycodex's system skills into CODEX_HOME) is built at
        # the first turn's refresh, not at thread/start, so a thread/start that fails (a read-only home) says
        # only why it failed.
        self._catalog = catalog
        self.local: tuple[Skill, ...] = ()
        self.selected = SelectedSkills()
        self._readers: dict[str, SkillFileReader] = {}

    def reader_for(self, environment_id: str) -> SkillFileReader | None:
        """The file reader of a selected root's environment (None before ``select_roots``)."""
        return self._readers.get(environment_id)

    @staticmethod
    def parse_roots(raw: Sequence[BaseModel | JsonObj] | None) -> list[SelectedRoot]:
        """Validate ``selectedCapabilityRoots``; raises InvalidRequest naming the bad field."""
        if not raw:
            return []
        try:
            return parse_selected_roots(
                [r.model_dump(by_alias=True) if isinstance(r, BaseModel) else r for r in raw]
            )
        except ValueError as exc:
            raise InvalidRequest(f"Invalid request: {exc}") from None

    async def select_roots(self, thread: SkillsThread, raw: Sequence[BaseModel | JsonObj] | None) -> None:
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

    async def refresh(self, thread: SkillsThread) -> None:
        """Re-read the local skills for the thread's cwd (a SKILL.md may have changed)."""
        skill_set = await self._catalog().skills_for_cwd(str(thread.settings.cwd), force_reload=True)
        self.local = tuple(s for s in skill_set.skills if s.enabled)  # disabled ones never reach the model

    def sections(self) -> list[str]:
        """The developer-message sections that list the thread's skills."""
        return skills_sections(self.local, self.selected.skills)

    def injections(self, inputs: list[JsonObj]) -> list[str]:
        """The ``<skill>`` user-message texts the turn's input calls for, appended after its user message."""
        return injections_for(inputs, self.local, self.selected.skills)

    def tools(self) -> list[JsonObj]:
        """The ``skills`` tool spec when selected roots hold skills, else nothing."""
        return [skills_tool_spec()] if self.selected.skills else []

    async def call_tool(self, name: str, arguments: str) -> str:
        """Run the ``skills`` tool (read a selected skill's files); returns the tool's output text."""
        return await SkillsTool(self.selected.skills, self.reader_for).call(name, arguments)
