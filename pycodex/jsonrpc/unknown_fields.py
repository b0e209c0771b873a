"""Fields a newer client sends that this server does not know: ignored (logged at debug), unless they touch safety.

Codex ignores unknown params fields (serde's default), and a newer client (the 0.171 TUI's
``mcpServerStatus/list.environmentId``, ...) relies on that. Both servers' routers therefore accept them
on every method. The one exception (where the router's ``refuse_unknown_safety_fields`` is set: the
app-server, whose models mirror Codex's schema) is a field whose meaning could change what a command may do: ignoring
an unknown ``sandbox*`` key, say, would run the command with *more* access than the client asked for. So
an unknown key is refused (-32602, naming it) when

- its name speaks of safety: it contains one of :data:`SAFETY_WORDS` (case and ``_`` ignored), e.g.
  ``sandboxMode``, ``approvalsReviewer``, ``permissionProfile``, ``writableRoots``, ``dangerouslyBypass...``;
- or it sits inside a known field whose name does (``sandboxPolicy: {"type": "workspaceWrite",
  "newRestriction": ...}``, ``approvalPolicy: {"granular": {...}}``, ``permissions: {...}``).

Everything else unknown is ignored. The walk follows the params model's declared fields (through
``Optional``/unions/lists/dicts of models); a model that keeps extras on purpose (``extra="allow"``) and
opaque JSON fields are not inspected.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel

__all__ = ["SAFETY_WORDS", "UnknownFields", "find_unknown_fields"]

#: Substrings (lower case, no ``_``) that make an unknown key, or everything under a known key, safety-relevant.
SAFETY_WORDS: tuple[str, ...] = (
    "sandbox",
    "approval",
    "permission",
    "writableroot",
    "readonly",
    "networkaccess",
    "dangerous",
    "bypass",
    "escalat",
)


@dataclass(slots=True)
class UnknownFields:
    """The unknown keys of one request's params, as dotted paths (``sandboxPolicy.newRestriction``)."""

    ignored: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def is_safety_key(key: str) -> bool:
    """Whether a key's name speaks of sandboxing, approvals or permissions."""
    folded = key.replace("_", "").replace("-", "").lower()
    return any(word in folded for word in SAFETY_WORDS)


def find_unknown_fields(model: type[BaseModel], params: object) -> UnknownFields:
    """The keys of ``params`` (raw JSON) that ``model`` does not declare, split into ignored and refused."""
    found = UnknownFields()
    _walk((model,), params, "", guarded=False, found=found)
    return found


@dataclass(frozen=True, slots=True)
class _Plan:
    """What may sit below one field: models directly, as list items, as dict values."""

    direct: tuple[type[BaseModel], ...]
    items: tuple[type[BaseModel], ...]
    values: tuple[type[BaseModel], ...]
    #: The field's own name speaks of safety: everything unknown below it is refused.
    safety: bool


def _walk(models: tuple[type[BaseModel], ...], value: object, path: str, *, guarded: bool, found: UnknownFields) -> None:
    if not isinstance(value, dict) or not models:
        return
    fields = _fields(models)
    if fields is None:
        return  # the model keeps extras on purpose; its handler decides
    for key, item in value.items():
        plan = fields.get(key)
        where = f"{path}.{key}" if path else str(key)
        if plan is None:
            (found.refused if guarded or is_safety_key(str(key)) else found.ignored).append(where)
            continue
        safety = guarded or plan.safety
        if plan.direct and isinstance(item, dict):
            _walk(plan.direct, item, where, guarded=safety, found=found)
        elif plan.items and isinstance(item, list):
            for index, element in enumerate(item):
                _walk(plan.items, element, f"{where}[{index}]", guarded=safety, found=found)
        elif plan.values and isinstance(item, dict):
            for name, element in item.items():
                _walk(plan.values, element, f"{where}.{name}", guarded=safety, found=found)


# Memoised per model class (classes are immutable once built): a request's walk then costs a few dict lookups
# per key instead of re-reading type annotations.
@functools.cache
def _fields(models: tuple[type[BaseModel], ...]) -> dict[str, _Plan] | None:
    """Every key the models declare (names and aliases) and its plan; None if one keeps extras."""
    if any(m.model_config.get("extra") == "allow" for m in models):
        return None
    fields: dict[str, _Plan] = {}
    for model in models:
        for name, info in model.model_fields.items():
            plan = _Plan(
                direct=tuple(_models(info.annotation)),
                items=tuple(m for arg in _container_args(info.annotation, (list, tuple, set, frozenset))
                            for m in _models(arg)),
                values=tuple(m for arg in _container_args(info.annotation, (dict,), last=True) for m in _models(arg)),
                safety=is_safety_key(name) or is_safety_key(info.alias or name),
            )
            fields.setdefault(name, plan)
            if info.alias:
                fields.setdefault(info.alias, plan)
    return fields


def _models(annotation: object) -> Iterator[type[BaseModel]]:
    """The models an annotation may hold directly (through Optional, unions and Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from _models(typing.get_args(annotation)[0])
    elif origin is typing.Union or type(annotation).__name__ == "UnionType":
        for arg in typing.get_args(annotation):
            yield from _models(arg)


def _container_args(annotation: object, kinds: tuple[type, ...], *, last: bool = False) -> Iterator[object]:
    """The element annotations of the containers of ``kinds`` an annotation may be (through unions)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from _container_args(typing.get_args(annotation)[0], kinds, last=last)
    elif origin is typing.Union or type(annotation).__name__ == "UnionType":
        for arg in typing.get_args(annotation):
            yield from _container_args(arg, kinds, last=last)
    elif isinstance(origin, type) and issubclass(origin, kinds):
        args = typing.get_args(annotation)
        if args:
            yield args[-1] if last else args[0]
