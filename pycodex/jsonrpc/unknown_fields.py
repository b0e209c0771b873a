"""Fields a newer client sends that this server does not know: ignored (logged at debug), unless they touch safety.

Codex ignores unknown params fields (serde's default), and a newer client (the 0.171 TUI's
``mcpServerStatus/list.environmentId``, ...) relies on that. Both servers' routers therefore accept them
on every method. The one exception is a field whose meaning could change what a command may do: ignoring
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


def _walk(models: tuple[type[BaseModel], ...], value: object, path: str, *, guarded: bool, found: UnknownFields) -> None:
    if not isinstance(value, dict) or not models:
        return
    if any(m.model_config.get("extra") == "allow" for m in models):
        return  # the model keeps extras on purpose; its handler decides
    fields = {key: info for m in models for key, info in _keys(m)}
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        safety = guarded or is_safety_key(str(key))
        annotation = fields.get(key)
        if annotation is None:
            (found.refused if safety else found.ignored).append(where)
            continue
        for inner_models, inner_value, inner_path in _children(annotation, item, where):
            _walk(inner_models, inner_value, inner_path, guarded=safety, found=found)


def _keys(model: type[BaseModel]) -> Iterator[tuple[str, object]]:
    for name, info in model.model_fields.items():
        yield name, info.annotation
        if info.alias:
            yield info.alias, info.annotation


def _children(annotation: object, value: object, path: str) -> Iterator[tuple[tuple[type[BaseModel], ...], object, str]]:
    """The (models, value, path) pairs to walk below a field: the value itself, list items, dict values."""
    direct = tuple(_models(annotation))
    if direct and isinstance(value, dict):
        yield direct, value, path
    if isinstance(value, list):
        items = tuple(m for arg in _container_args(annotation, (list, tuple, set, frozenset)) for m in _models(arg))
        for index, item in enumerate(value):
            yield items, item, f"{path}[{index}]"
    elif isinstance(value, dict):
        values = tuple(m for arg in _container_args(annotation, (dict,), last=True) for m in _models(arg))
        if values:
            for key, item in value.items():
                yield values, item, f"{path}.{key}"


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
