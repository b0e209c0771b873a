"""The one home of the JSON shapes every package passes around.

``JsonObj`` is a decoded JSON object at the wire's edge: what a codec produced or a peer will encode, before
(or instead of) a typed model. Code past the edge should prefer a pydantic model or a ``TypedDict``; this
alias is where the untyped part is allowed to live, so ``Any`` is spelt once here rather than in every module.
"""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["JsonObj", "JsonValue"]

#: A decoded JSON object.
JsonObj: TypeAlias = dict[str, Any]
#: Any decoded JSON value (object, array, string, number, boolean or null).
JsonValue: TypeAlias = Any
