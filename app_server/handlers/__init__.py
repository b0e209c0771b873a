"""Request handlers, one module per method family, each with a ``ROUTES`` table.

``register_all`` declares every family's methods at start-up but imports a family's module (and so
builds the pydantic params and response models it names) only when one of its methods is first
requested: serving ``initialize`` must not pay for the whole protocol surface. ``FAMILIES`` is checked
against the modules' ``ROUTES`` by test_families_match_the_handler_modules_routes in
tests/app_server/test_app_server_startup_imports.py.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["FAMILIES", "register_all"]

#: Handler module -> its methods. This order is the one "unknown variant" errors list.
FAMILIES: dict[str, tuple[str, ...]] = {
    "initialize": ("initialize",),
    "threads": (
        "thread/start", "thread/resume", "thread/fork", "thread/read", "thread/list", "thread/loaded/list",
        "thread/turns/list", "thread/name/set", "thread/archive", "thread/unarchive", "thread/unsubscribe",
    ),
    "thread_history": ("thread/items/list", "thread/items/read", "thread/readState/update"),
    "thread_goals": ("thread/goal/get", "thread/goal/set", "thread/goal/clear"),
    "thread_terminals": (
        "thread/backgroundTerminals/list", "thread/backgroundTerminals/clean",
        "thread/backgroundTerminals/terminate",
    ),
    "thread_sections": (
        "threadSection/list", "threadSection/create", "threadSection/update", "threadSection/delete",
        "thread/section/move", "thread/delete", "thread/metadata/update",
    ),
    "thread_search": (
        "thread/search", "thread/searchOccurrences", "thread/search/stream", "thread/search/cancel",
        "thread/search/stream/cancel",
    ),
    "thread_memory": ("thread/memoryMode/set", "memory/status", "memory/reset", "thread/memory/read"),
    "thread_inject": ("thread/inject_items",),
    "thread_compact": ("thread/compact/start",),
    "thread_shell": ("thread/shellCommand",),
    "thread_settings": ("thread/settings/update",),
    "thread_revert": ("thread/revert",),
    "thread_queue": (
        "thread/queue/add", "thread/queue/list", "thread/queue/update", "thread/queue/delete", "thread/queue/reorder",
        "thread/queue/start",
    ),
    "thread_attachments": (
        "thread/attachment/add", "thread/attachment/list", "thread/attachmentOwner/list", "thread/attachment/remove",
    ),
    "thread_controls": (
        "thread/increment_elicitation", "thread/decrement_elicitation", "thread/sample/cancel",
        "thread/prediction/request", "thread/realtime/listVoices",
    ),
    "thread_guardian": ("thread/guardianReview", "thread/approveGuardianDeniedAction"),
    "turns": ("turn/start", "turn/steer", "turn/interrupt"),
    "review": ("review/start",),
    "info": ("skills/list", "account/read"),
    "models": (
        "model/list", "modelProvider/list", "modelProvider/capabilities/read", "modelProvider/config/write",
        "modelProvider/default/set",
    ),
    "config": ("config/read", "config/value/write", "config/batchWrite", "configRequirements/read"),
    "search": (
        "fuzzyFileSearch", "fuzzyFileSearch/sessionStart", "fuzzyFileSearch/sessionUpdate",
        "fuzzyFileSearch/sessionStop",
    ),
    "fs": (
        "fs/readFile", "fs/writeFile", "fs/createDirectory", "fs/getMetadata", "fs/readDirectory",
        "fs/remove", "fs/copy", "fs/watch", "fs/unwatch",
    ),
    "commands": (
        "command/exec", "command/exec/write", "command/exec/terminate", "command/exec/resize",
        "process/spawn", "process/writeStdin", "process/kill", "process/resizePty",
    ),
    "hooks": ("hooks/list",),
    "plugins": (
        "skills/config/write", "skills/extraRoots/set", "plugin/list", "plugin/installed", "plugin/read",
        "plugin/install", "plugin/uninstall", "plugin/reconcile", "plugin/search", "plugin/skill/read",
        "plugin/share/save", "plugin/share/updateTargets", "plugin/share/list", "plugin/share/checkout",
        "plugin/share/delete", "marketplace/add", "marketplace/remove", "marketplace/upgrade", "app/list",
        "app/read", "app/installed",
    ),
    "accounts": (
        "account/login/start", "account/logout", "account/login/cancel", "account/gatewayOAuth/read",
        "account/gatewayOAuth/login", "account/gatewayOAuth/cancel", "account/securitySetup/read",
        "account/rateLimits/read", "account/rateLimitResetCredit/consume", "account/usage/read",
        "account/workspaceMessages/read", "account/sendAddCreditsNudgeEmail", "accountSession/list",
        "accountSession/switch", "account/bedrock/discover", "account/bedrock/setup",
        "account/bedrock/checkGovCloudRequirements", "account/gcp/setup",
    ),
    "misc": (
        "collaborationMode/list", "experimentalFeature/list", "experimentalFeature/enablement/set",
        "permissionProfile/list", "feedback/save", "feedback/upload", "externalAgentConfig/detect",
        "externalAgentConfig/import", "externalAgentConfig/import/recordHistory",
        "externalAgentConfig/import/readHistories", "windowsSandbox/setupStart", "windowsSandbox/readiness",
        "server/diagnostics", "userVerification/status", "userVerification/enroll", "userVerification/delete",
        "userVerification/verify", "userVerification/cancel", "remoteControl/enable", "remoteControl/disable",
        "remoteControl/status/read", "remoteControl/pairing/start", "remoteControl/pairing/status",
        "remoteControl/client/list", "remoteControl/client/revoke", "mock/experimentalMethod",
    ),
    "environments": ("environment/add", "environment/info", "environment/status"),
    "mcp": (
        "mcpServerStatus/list", "mcpServer/tool/call", "mcpServer/resource/read", "config/mcpServer/reload",
        "mcpServer/oauth/login", "mcpServer/event/stream/start", "mcpServer/event/stream/stop",
    ),
}


def register_all(app: AppServer) -> None:
    for family, methods in FAMILIES.items():
        app.router.add_family(methods, _loader(app, family))


def _loader(app: AppServer, family: str) -> Callable[[], None]:
    def load() -> None:
        from app_server.handlers.table import register_routes

        register_routes(app, import_module(f"{__name__}.{family}").ROUTES)

    return load
