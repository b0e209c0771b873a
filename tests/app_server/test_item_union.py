"""The two flavours of the ThreadItem union list the same models, and the variant tags come from them."""

from __future__ import annotations

import typing

from app_server.protocol.items import (
    CODEX_THREAD_ITEM_TYPES,
    THREAD_ITEM_VARIANTS,
    KnownThreadItem,
    ThreadItem,
    UnknownThreadItem,
)


def _members(union: object) -> list[object]:
    return list(typing.get_args(typing.get_args(union)[0]))


def test_the_tolerant_union_holds_the_strict_one_plus_the_raw_fallback() -> None:
    tolerant = [typing.get_args(member) for member in _members(ThreadItem)]
    models = [args[0] for args in tolerant]
    assert models[:-1] == _members(KnownThreadItem) and models[-1] is UnknownThreadItem
    tags = [next(m.tag for m in args[1:] if hasattr(m, "tag")) for args in tolerant[:-1]]
    assert tuple(tags) == THREAD_ITEM_VARIANTS  # each member's Tag is its model's type


def test_every_modelled_variant_is_a_codex_item_type_in_codex_order() -> None:
    assert [t for t in CODEX_THREAD_ITEM_TYPES if t in THREAD_ITEM_VARIANTS] == list(THREAD_ITEM_VARIANTS)
    assert UnknownThreadItem.KNOWN_TAGS == THREAD_ITEM_VARIANTS
