"""What the model is sent: the initial context of a thread and the per-turn user message.

Layout (app_server.md §8): a developer message with the base instructions; a developer message with
the developer instructions, the skills list, the permissions text and the namespaces deferred behind
tool_search; a user message with AGENTS.md and the environment context; then the user's own message. All
prose here is pycodex's own.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pycodex.git_repo import DOT_GIT, is_repository_root
from pycodex.json_types import JsonObj

__all__ = [
    "ContextInputs",
    "EnvironmentStatus",
    "base_instructions",
    "developer_message",
    "initial_context",
    "message_item",
    "user_message_item",
]


_BASE_NAMESPACE = uuid.UUID("6f1d8a52-3c1b-4b7e-9a0e-2b7c4f8e1d11")
DEFAULT_PROJECT_DOC_MAX_BYTES = 32 * 1024


def base_instructions() -> str:
    """The built-in base instructions (``app_server/prompts/base_instructions.md``)."""
    return resources.files("app_server.prompts").joinpath("base_instructions.md").read_text("utf-8")


def message_item(role: str, texts: list[str], *, item_id: str | None = None) -> JsonObj:
    """A Responses ``message`` item of ``role`` with one text part per entry of ``texts``."""
    kind = "output_text" if role == "assistant" else "input_text"
    item: JsonObj = {"type": "message"}
    if item_id is not None:
        item["id"] = item_id
    item["role"] = role
    item["content"] = [{"type": kind, "text": t} for t in texts]
    return item


def developer_message(texts: list[str]) -> JsonObj:
    """A developer message with a fresh ``msg_`` id."""
    return message_item("developer", texts, item_id=f"msg_{uuid.uuid4()}")


def user_message_item(texts: list[str]) -> JsonObj:
    """A user message with a fresh ``msg_`` id."""
    return message_item("user", texts, item_id=f"msg_{uuid.uuid4()}")


@dataclass(frozen=True)
class EnvironmentStatus:
    """How the thread's default execution environment looks to the model."""

    kind: str = "local"  # local | remote | none
    failed_reason: str | None = None


@dataclass(frozen=True)
class ContextInputs:
    """What the context messages (permissions, environment, instructions) are built from."""

    cwd: Path
    sandbox_mode: str
    approval_policy: str
    writable_roots: list[str] = field(default_factory=list)
    network_access: bool = False
    base_instructions: str | None = None
    developer_instructions: str | None = None
    skills_sections: list[str] = field(default_factory=list)
    environment: EnvironmentStatus = EnvironmentStatus()
    project_root_markers: tuple[str, ...] = (".git",)
    project_doc_max_bytes: int = DEFAULT_PROJECT_DOC_MAX_BYTES
    timezone: str | None = None
    #: The ``<tools>`` part naming the namespaces deferred behind tool_search (``tools.tool_search``).
    tools_section: str | None = None


_APPROVAL_TEXT = {
    "never": "Commands never ask for approval. Work within the sandbox; if something cannot be done "
    "there, say so instead of asking.",
    "on-request": "Commands run inside the sandbox without asking. When a command truly needs to run "
    "outside it, request escalation with `sandbox_permissions: \"require_escalated\"` and a short "
    "`justification`; the user then approves or declines.",
    "untrusted": "Only a small set of known read-only commands runs without asking; every other command "
    "asks the user for approval first.",
}

_SANDBOX_TEXT = {
    "read-only": "The sandbox is read-only: commands may read files but cannot write anywhere.",
    "workspace-write": "The sandbox allows writes inside the workspace, the writable roots listed below "
    "and the temporary directory; writes elsewhere fail.",
    "danger-full-access": "There is no sandbox: commands have full access to the machine.",
}


def permissions_text(ctx: ContextInputs) -> str:
    """The ``<permissions instructions>`` text: sandbox mode, approval policy and network access."""
    policy = "unless-trusted" if ctx.approval_policy == "untrusted" else ctx.approval_policy
    lines = [
        "<permissions instructions>",
        f"sandbox_mode: {ctx.sandbox_mode}. {_SANDBOX_TEXT.get(ctx.sandbox_mode, '')}",
        f"approval_policy: {policy}. {_APPROVAL_TEXT.get(ctx.approval_policy, '')}",
        f"network_access: {'enabled' if ctx.network_access else 'restricted'}.",
    ]
    if ctx.sandbox_mode == "workspace-write":
        roots = ctx.writable_roots or [str(ctx.cwd)]
        lines.append("writable_roots: " + ", ".join(f"`{r}`" for r in roots))
    lines.append("</permissions instructions>")
    return "\n".join(lines)


def environment_context(ctx: ContextInputs, *, today: _dt.date | None = None) -> str:
    """The ``<environment_context>`` text: cwd, shell, date, timezone and the execution environment."""
    today = today or _dt.date.today()
    tz = ctx.timezone or (_dt.datetime.now().astimezone().tzname() or "UTC")
    parts = ["<environment_context>"]
    if ctx.environment.kind != "none":
        parts.append(f"  <cwd>{ctx.cwd}</cwd>")
        parts.append("  <shell>bash</shell>")
    if ctx.environment.failed_reason is not None:
        parts.append("  <status>failed</status>")
        parts.append(f"  <error>{ctx.environment.failed_reason}</error>")
    parts.append(f"  <current_date>{today.isoformat()}</current_date>")
    parts.append(f"  <timezone>{tz}</timezone>")
    roots = [str(ctx.cwd)] if ctx.environment.kind != "none" else []
    parts.append("  <filesystem>")
    parts.append("    <workspace_roots>" + "".join(f"<root>{r}</root>" for r in roots) + "</workspace_roots>")
    parts.append(f'    <permission_profile sandbox="{ctx.sandbox_mode}" network="'
                 f'{"enabled" if ctx.network_access else "restricted"}"/>')
    parts.append("  </filesystem>")
    parts.append("</environment_context>")
    return "\n".join(parts)


def _project_root(cwd: Path, markers: tuple[str, ...]) -> Path:
    for candidate in (cwd, *cwd.parents):
        # `.git` is the product's one repository check (pycodex/git_repo.py); other markers need only exist
        if any(is_repository_root(candidate) if m == DOT_GIT else (candidate / m).exists() for m in markers):
            return candidate
    return cwd


def agents_md(ctx: ContextInputs) -> str | None:
    """AGENTS.md files from the project root down to the cwd, joined, within the byte budget."""
    try:
        cwd = ctx.cwd.resolve()
    except OSError:
        return None
    root = _project_root(cwd, ctx.project_root_markers)
    chain = [cwd] if root == cwd else [root, *reversed([p for p in cwd.parents if root in p.parents]), cwd]
    texts: list[str] = []
    budget = ctx.project_doc_max_bytes
    for folder in dict.fromkeys(chain):
        path = folder / "AGENTS.md"
        try:
            data = path.read_bytes()[: max(budget, 0)]
        except OSError:
            continue
        if not data:
            continue
        budget -= len(data)
        texts.append(data.decode("utf-8", "replace"))
        if budget <= 0:
            break
    if not texts:
        return None
    body = "\n\n".join(texts)
    return f"# AGENTS.md instructions for {ctx.cwd}\n\n<INSTRUCTIONS>\n{body}\n</INSTRUCTIONS>"


def initial_context(ctx: ContextInputs) -> list[JsonObj]:
    """The items that open a new thread's model input, before the first user message."""
    base = ctx.base_instructions if ctx.base_instructions is not None else base_instructions()
    base_id = f"msg_{uuid.uuid5(_BASE_NAMESPACE, base)}"
    items = [message_item("developer", [base], item_id=base_id)]
    dev_parts: list[str] = []
    if ctx.developer_instructions:
        dev_parts.append(ctx.developer_instructions)
    dev_parts.extend(ctx.skills_sections)
    dev_parts.append(permissions_text(ctx))
    if ctx.tools_section:
        dev_parts.append(ctx.tools_section)
    items.append(developer_message(dev_parts))
    user_parts = []
    doc = agents_md(ctx)
    if doc is not None:
        user_parts.append(doc)
    user_parts.append(environment_context(ctx))
    items.append(user_message_item(user_parts))
    return items
