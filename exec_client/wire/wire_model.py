"""The base models of the exec-server wire: camelCase on the wire, unknown members ignored.

A leaf module so that the protocol's parts (:mod:`exec_client.wire.protocol`,
:mod:`exec_client.wire.fs_protocol`) share one definition of how a model meets the wire.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from pycodex.json_types import JsonObj

__all__ = ["StrictWire", "WireModel"]


class WireModel(BaseModel):
    """A wire model: camelCase on the wire, unknown fields ignored (as serde's default)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def wire(self) -> JsonObj:
        """The model as the JSON object it is on the wire (camelCase keys)."""
        return self.model_dump(by_alias=True, mode="json")


class StrictWire(WireModel):
    """Params are strict about types, like serde: no str→int or int→bool coercion."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", strict=True)
