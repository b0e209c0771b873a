"""The ``sandbox`` object of the ``fs/*`` methods, validated as strictly as Codex 0.169.0 does.

Shapes and error texts were taken from the binary (serde): unknown variants are ``unknown variant
`x`, expected ...``, missing fields ``missing field `x` ``, unknown keys are ignored. Only the fields
the exec-server acts on are typed precisely; the Windows-only ones are checked for their variant
and otherwise ignored.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

from exec_client.wire.uris import FileUri

__all__ = [
    "Access",
    "ExecPermissionProfile",
    "FileSystemPath",
    "FileSystemPolicy",
    "SandboxEntry",
    "SpecialPath",
    "WireFileSystemSandboxContext",
]


Access = Literal["read", "write", "deny", "none"]
SpecialKind = Literal[
    "root", "minimal", "current_working_directory", "project_roots", "tmpdir", "slash_tmp", "unknown"
]


class _Serde(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


def _require(model: BaseModel, *names: str) -> None:
    for name in names:
        if getattr(model, name) is None:
            raise ValueError(f"missing field `{name}`")


class SpecialPath(_Serde):
    """A special path of a sandbox entry (the cwd, tmpdir, the root ...), with an optional subpath."""

    kind: SpecialKind
    subpath: str | None = None
    path: str | None = None

    @model_validator(mode="after")
    def _fields(self) -> SpecialPath:
        if self.kind == "unknown":
            _require(self, "path")
        return self


_FIELD = {"path": "path", "glob_pattern": "pattern", "special": "value"}


class FileSystemPath(_Serde):
    """The path of a sandbox entry: a literal path, a glob pattern or a special path."""

    type: Literal["path", "glob_pattern", "special"]
    path: FileUri | None = None
    pattern: str | None = None
    value: SpecialPath | None = None

    @model_validator(mode="before")
    @classmethod
    def _only_the_variants_field(cls, data: object) -> object:
        # serde reads only the chosen variant's field; the others are unknown keys, ignored.
        if isinstance(data, dict) and data.get("type") in _FIELD:
            return {k: v for k, v in data.items() if k in ("type", _FIELD[data["type"]])}
        return data

    @model_validator(mode="after")
    def _fields(self) -> FileSystemPath:
        _require(self, _FIELD[self.type])
        return self


class SandboxEntry(_Serde):
    """One sandbox entry: a path and the access granted to it."""

    path: FileSystemPath
    access: Access


class FileSystemPolicy(_Serde):
    """The filesystem half of a permission profile: unrestricted, or restricted to its entries."""

    type: Literal["restricted", "unrestricted"]
    entries: list[SandboxEntry] | None = None

    @model_validator(mode="after")
    def _fields(self) -> FileSystemPolicy:
        if self.type == "restricted":
            _require(self, "entries")
        return self


class ExecPermissionProfile(_Serde):
    """A permission profile: managed (filesystem and network rules), disabled, or external."""

    type: Literal["managed", "disabled", "external"]
    file_system: FileSystemPolicy | None = None
    network: Literal["restricted", "enabled"] | None = None

    @model_validator(mode="after")
    def _fields(self) -> ExecPermissionProfile:
        if self.type == "managed":
            _require(self, "file_system", "network")
        elif self.type == "external":
            _require(self, "network")
        return self


class WireFileSystemSandboxContext(_Serde):
    """The ``sandbox`` of an fs request: the permission profile to check paths against, and the cwd."""

    model_config = ConfigDict(extra="ignore", strict=True, alias_generator=to_camel, populate_by_name=True)

    permissions: ExecPermissionProfile
    windows_sandbox_level: Literal["disabled", "restricted-token", "elevated", "mxc"]
    cwd: FileUri | None = None
    workspace_roots: list[FileUri] = []
    user_home_dir: FileUri | None = None
    temporary_directories: list[FileUri] | None = None
    use_legacy_landlock: bool = False
