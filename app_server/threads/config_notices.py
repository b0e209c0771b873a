"""What Codex 0.169 tells a client each time it builds a thread's config (thread/start, and thread/resume or
thread/fork of a thread that is not loaded): a ``deprecationNotice`` per deprecated key, then the config's
unrecognized-settings warning again, as a ``warning`` for that thread.

Deprecated keys are those of the ``[features]`` table (and the one legacy top-level toggle Codex still
reads); a key counts whatever its value, and the notices come in key order. Texts are the binary's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app_server.config.errors import ConfigWarning
from app_server.protocol import notices

__all__ = ["deprecation_notices", "thread_config_notices"]

#: How the unrecognized-settings config warning starts (``config.errors.unknown_keys_warning``); pycodex's own
#: config warnings (the scripted-model fallback, settings it does not implement) are not repeated per thread.
_UNRECOGNIZED = "Codex is ignoring "

_DOCS = "https://developers.openai.com/codex/config-basic#feature-flags"
#: Legacy feature names -> the feature that replaced them.
_RENAMED = {
    "collab": "multi_agent",
    "connectors": "apps",
    "enable_experimental_windows_sandbox": "experimental_windows_sandbox",
    "experimental_use_unified_exec_tool": "unified_exec",
    "memory_tool": "memories",
}
_WEB_SEARCH_DETAILS = (
    'Set `web_search` to `"live"`, `"indexed"`, `"cached"`, or `"disabled"` at the top level (or under a '
    "profile) in config.toml if you want to override it."
)
#: Retired features -> (what the summary says after the key, details).
_RETIRED = {
    "transcript_v2": ("is deprecated and ignored.", "Use `[tui].fullscreen_transcript` in config.toml instead."),
    "use_legacy_landlock": (
        "is deprecated and will be removed soon.",
        "Remove this setting to stop opting into the legacy Linux sandbox behavior.",
    ),
    **{
        key: ("is deprecated because web search is enabled by default.", _WEB_SEARCH_DETAILS)
        for key in ("web_search", "web_search_cached", "web_search_request")
    },
}
#: Legacy toggles Codex still reads at the top level of config.toml (reported as `[features].KEY`).
_TOP_LEVEL = frozenset({"experimental_use_unified_exec_tool"})


def _notice(key: str) -> notices.Notice | None:
    if key in _RENAMED:
        new = _RENAMED[key]
        return notices.deprecation_notice(
            f"`[features].{key}` is deprecated. Use `[features].{new}` instead.",
            f"Enable it with `--enable {new}` or `[features].{new}` in config.toml. See {_DOCS} for details.",
        )
    if key in _RETIRED:
        verdict, details = _RETIRED[key]
        return notices.deprecation_notice(f"`[features].{key}` {verdict}", details)
    return None


def deprecation_notices(config: Mapping[str, object]) -> list[notices.Notice]:
    """The notices a thread built from the merged config table ``config`` draws, in Codex's order."""
    features = config.get("features")
    keys = set(features) if isinstance(features, Mapping) else set()
    keys |= _TOP_LEVEL & set(config)
    return [notice for key in sorted(keys) if (notice := _notice(key)) is not None]


def thread_config_notices(
    config: Mapping[str, object], warnings: Sequence[ConfigWarning], thread_id: str
) -> list[notices.Notice]:
    """Everything a thread built from ``config`` (whose load gave ``warnings``) is announced with, in order."""
    repeated = [notices.warning(thread_id, w.summary) for w in warnings if w.summary.startswith(_UNRECOGNIZED)]
    return deprecation_notices(config) + repeated
