"""`UserInput`: what a client sends as turn/start / turn/steer input and what userMessage items echo.

`UserInput` is strict (unknown `type` tags fail, naming the variants in `USER_INPUT_VARIANTS`);
`StoredUserInput` is tolerant (unknown tags load as `UnknownUserInput`, a raw dict kept verbatim).
The text variant's `text_elements` is snake_case on the wire.
"""

# Annotations are evaluated as the classes are made (no `from __future__ import annotations`): pydantic
# would otherwise compile each string annotation again, ~15% of this module's import on the thread/start path.
from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import Discriminator, Field, GetJsonSchemaHandler, RootModel, Tag
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from pycodex.json_types import JsonObj

from .base import OMIT_IF_NONE, OmittingWireModel, WireModel

ImageDetail = Literal["auto", "low", "high", "original"]
UNKNOWN_TAG = "__unknown__"


class ByteRange(WireModel):
    """A range of UTF-8 bytes, start inclusive, end exclusive."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)


class TextElement(WireModel):
    """A marked span of a text input by byte range, with the placeholder it stands for."""

    byte_range: ByteRange
    placeholder: str | None = None


class TextUserInput(WireModel):
    """The `"type": "text"` variant (`TextUserInput`)."""

    type: Literal["text"] = "text"
    text: str
    # snake_case on the wire; the camelCase `textElements` is ignored like any unknown key
    text_elements: list[TextElement] = Field(default_factory=list, alias="text_elements")


class ImageUserInput(OmittingWireModel):
    """The `"type": "image"` variant (`ImageUserInput`)."""

    type: Literal["image"] = "image"
    url: Annotated[str | None, OMIT_IF_NONE] = None
    file_id: Annotated[str | None, OMIT_IF_NONE] = None
    detail: ImageDetail | None = None


class LocalImageUserInput(WireModel):
    """The `"type": "localImage"` variant (`LocalImageUserInput`)."""

    type: Literal["localImage"] = "localImage"
    path: str
    detail: ImageDetail | None = None


class AudioUserInput(OmittingWireModel):
    """The `"type": "audio"` variant (`AudioUserInput`)."""

    type: Literal["audio"] = "audio"
    url: Annotated[str | None, OMIT_IF_NONE] = None
    file_id: Annotated[str | None, OMIT_IF_NONE] = None


class LocalAudioUserInput(WireModel):
    """The `"type": "localAudio"` variant (`LocalAudioUserInput`)."""

    type: Literal["localAudio"] = "localAudio"
    path: str


class SkillUserInput(WireModel):
    """The `"type": "skill"` variant (`SkillUserInput`)."""

    type: Literal["skill"] = "skill"
    name: str
    path: str


class MentionUserInput(WireModel):
    """The `"type": "mention"` variant (`MentionUserInput`)."""

    type: Literal["mention"] = "mention"
    name: str
    path: str


USER_INPUT_VARIANTS: tuple[str, ...] = (
    "text",
    "image",
    "localImage",
    "audio",
    "localAudio",
    "skill",
    "mention",
)

UserInput: TypeAlias = Annotated[
    TextUserInput
    | ImageUserInput
    | LocalImageUserInput
    | AudioUserInput
    | LocalAudioUserInput
    | SkillUserInput
    | MentionUserInput,
    Field(discriminator="type"),
]


class RawWireObject(RootModel[JsonObj]):
    """An object of a variant we do not model; kept verbatim (key order included)."""

    # tags the sibling models own; the JSON schema excludes them so the union stays a proper oneOf
    KNOWN_TAGS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema = handler.resolve_ref_schema(schema)
        if cls.KNOWN_TAGS:
            schema["not"] = {"properties": {"type": {"enum": list(cls.KNOWN_TAGS)}}, "required": ["type"]}
        return schema

    @property
    def type(self) -> str | None:
        """The object's `type` tag, when it has a string one."""
        tag = self.root.get("type")
        return tag if isinstance(tag, str) else None


class UnknownUserInput(RawWireObject):
    """A user input of a `type` pycodex does not know, kept as its raw wire object."""

    KNOWN_TAGS = USER_INPUT_VARIANTS


def tag_of(value: object) -> object:
    """The `type` tag of a wire value: a dict's key, a model's attribute, or None."""
    if isinstance(value, dict):
        return value.get("type")
    if isinstance(value, RawWireObject):
        return value.type
    return getattr(value, "type", None)


def _stored_user_input_tag(value: object) -> str:
    tag = tag_of(value)
    return tag if isinstance(tag, str) and tag in USER_INPUT_VARIANTS else UNKNOWN_TAG


StoredUserInput: TypeAlias = Annotated[
    Annotated[TextUserInput, Tag("text")]
    | Annotated[ImageUserInput, Tag("image")]
    | Annotated[LocalImageUserInput, Tag("localImage")]
    | Annotated[AudioUserInput, Tag("audio")]
    | Annotated[LocalAudioUserInput, Tag("localAudio")]
    | Annotated[SkillUserInput, Tag("skill")]
    | Annotated[MentionUserInput, Tag("mention")]
    | Annotated[UnknownUserInput, Tag(UNKNOWN_TAG)],
    Discriminator(_stored_user_input_tag),
]
