"""Whether Codex 0.169 has metadata for a model slug, and the warning a turn on a slug without it draws.

Codex looks a slug up in its bundled catalog (the one ``model/list`` pages through, hidden entries
included) by prefix, so dated or suffixed slugs (``gpt-5.5-2026-01-01``) still match; one leading
``provider/`` namespace is ignored. Anything else runs on fallback metadata, and each turn on it starts
with a ``warning`` notification (observed on the binary).
"""

from __future__ import annotations

from collections.abc import Mapping

from app_server.model.catalog import catalog
from pycodex.json_types import JsonValue

__all__ = ["catalog_entry", "fallback_metadata_warning", "has_model_metadata"]


def catalog_entry(slug: str) -> Mapping[str, JsonValue] | None:
    """The catalog entry whose model prefixes ``slug`` (or ``namespace/slug``), or None without metadata."""
    namespace, _, rest = slug.partition("/")
    for candidate in (slug, rest if namespace else ""):
        for entry in catalog().models:
            if candidate and candidate.startswith(str(entry["model"])):
                return entry
    return None


def has_model_metadata(slug: str) -> bool:
    """Whether the catalog knows ``slug`` (or ``namespace/slug``) by one of its model prefixes."""
    return catalog_entry(slug) is not None


def fallback_metadata_warning(slug: str) -> str | None:
    """The text of the turn-start warning for ``slug``, or None when Codex knows the model."""
    if has_model_metadata(slug):
        return None
    return (
        f"Model metadata for `{slug}` not found. Defaulting to fallback metadata; "
        "this can degrade performance and cause issues."
    )
