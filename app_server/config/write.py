"""`config/value/write` and `config/batchWrite`: edit the user's config.toml in place.

Edits go through tomlkit, so the user's comments, ordering and formatting survive (Codex 0.169 rewrites
the file and drops them). A batch is all-or-nothing: every edit is applied to the document in memory,
the result is checked the way the loader checks config.toml, and only then is the file replaced
(atomically). Errors carry Codex's `config_write_error_code`:

* `configVersionConflict`: `expectedVersion` is not the file's current layer version;
* `configLayerReadonly`: `filePath` names a file other than the user's config.toml;
* `configValidationError`: an empty key path, a key under a non-table value, or a value the loader
  would refuse ("Invalid configuration: <cause>\\nin `<key>`\\n").

Unknown keys are written (as Codex does) and reported back as dotted names for a warning.

    outcome = write_values(loaded.config_path, [ConfigEdit("model", "gpt-6-sol")], codex_home=home)
    outcome.response   # {"status": "ok", "version": "sha256:…", "filePath": "…", "overriddenMetadata": None}
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from app_server.config.effective import ReadLayer, layer_version, unknown_dotted_keys
from app_server.config.errors import ConfigError
from app_server.config.loader import check_table
from app_server.config.tables import parse_toml
from pycodex.json_types import JsonObj, JsonValue
from pycodex.jsonrpc.errors import InvalidRequest

MergeStrategy = Literal["replace", "upsert"]
VERSION_CONFLICT = "Configuration was modified since last read. Fetch latest version and retry."
READONLY = "Only writes to the user config are allowed"
EMPTY_KEY = "keyPath must not be empty"
NON_TABLE_PARENT = "cannot set value on non-table parent"
# How Codex words an override, per overriding layer type (only session flags were observed).
OVERRIDE_MESSAGES = {"sessionFlags": "Overridden by session flags"}


class ConfigWriteError(InvalidRequest):
    """A refused write: -32600 with `{"config_write_error_code": code}` as error data."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, data={"config_write_error_code": code})
        self.write_code = code


@dataclass(frozen=True)
class ConfigEdit:
    """One edit of config.toml: the dotted key, the new value and how it merges with what is there."""

    key_path: str
    value: JsonValue
    merge_strategy: MergeStrategy = "replace"


@dataclass(frozen=True)
class WriteOutcome:
    """What a config write did: the response to send, the file's new table, and the unknown keys it holds."""

    response: JsonObj
    table: JsonObj  # the file's new contents, parsed
    unknown_keys: list[str] = field(default_factory=list)


def _check_target(config_path: Path, file_path: str | None) -> None:
    if file_path is None:
        return
    if Path(file_path).expanduser().resolve() != config_path.resolve():
        raise ConfigWriteError("configLayerReadonly", READONLY)


def _split(key_path: str) -> list[str]:
    if not key_path:
        raise ConfigWriteError("configValidationError", EMPTY_KEY)
    return key_path.split(".")


def _without_nulls(value: JsonValue) -> JsonValue:
    """TOML has no null: inside a written table a null simply leaves the key out."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value if v is not None]
    return value


def _upsert(container: Any, key: str, value: Any) -> None:
    current = container.get(key)
    if isinstance(value, Mapping) and isinstance(current, dict):
        for sub_key, sub_value in value.items():
            if sub_value is None:
                current.pop(sub_key, None)
            else:
                _upsert(current, sub_key, sub_value)
    else:
        container[key] = _without_nulls(value)


def apply_edit(doc: tomlkit.TOMLDocument, edit: ConfigEdit) -> None:
    """Apply one edit to the document in memory; a null value removes the key."""
    parts = _split(edit.key_path)
    container: Any = doc
    for part in parts[:-1]:
        if part not in container:
            if edit.value is None:
                return  # removing a key under a missing table: nothing to do
            container[part] = tomlkit.table(is_super_table=True)
        child = container[part]
        if not isinstance(child, dict):
            raise ConfigWriteError("configValidationError", NON_TABLE_PARENT)
        container = child
    last = parts[-1]
    if edit.value is None:
        container.pop(last, None)
    elif edit.merge_strategy == "upsert":
        _upsert(container, last, edit.value)
    else:
        container[last] = _without_nulls(edit.value)


def _read_doc(config_path: Path) -> tuple[tomlkit.TOMLDocument, JsonObj]:
    try:
        text = config_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigWriteError("configValidationError", f"Failed to read config file {config_path}: {exc}") from None
    try:
        return tomlkit.parse(text), parse_toml(text, str(config_path))
    except (TOMLKitError, ConfigError) as exc:
        raise ConfigWriteError("configValidationError", f"Invalid configuration: {exc}") from None


def _save(config_path: Path, text: str) -> None:
    config_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config.toml.", dir=config_path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, config_path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _drop_empty_super_tables(doc: Any) -> None:
    """An intermediate table created for a removed key would otherwise linger as an empty header."""
    for key in list(doc.keys()):
        item = doc[key]
        if isinstance(item, Table) and item.is_super_table():
            _drop_empty_super_tables(item)
            if not item:
                doc.pop(key)


def _lookup(table: Mapping[str, JsonValue], parts: list[str]) -> tuple[bool, JsonValue]:
    value: JsonValue = table
    for part in parts:
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def overridden_metadata(edits: Sequence[ConfigEdit], higher: Sequence[ReadLayer]) -> JsonObj | None:
    """Codex's `overriddenMetadata` for the first edit a higher layer also sets, with that layer's value."""
    for edit in edits:
        for layer in higher:
            message = OVERRIDE_MESSAGES.get(layer.name.get("type", ""))
            found, value = _lookup(layer.config, edit.key_path.split("."))
            if message is not None and found:
                return {"message": message, "effectiveValue": value,
                        "overridingLayer": {"name": layer.name, "version": layer_version(layer.config)}}
    return None


def write_values(
    config_path: Path,
    edits: Sequence[ConfigEdit],
    *,
    codex_home: Path,
    expected_version: str | None = None,
    file_path: str | None = None,
    env: Mapping[str, str] | None = None,
    higher_layers: Sequence[ReadLayer] = (),
) -> WriteOutcome:
    """Apply `edits` to config.toml as one change. Raises ConfigWriteError and writes nothing on error.

    `higher_layers` (e.g. the session-flags layer from effective.read_layers) turn the status into
    "okOverridden" when one of them also sets an edited key.
    """
    _check_target(config_path, file_path)
    doc, current = _read_doc(config_path)
    if expected_version is not None and expected_version != layer_version(current):
        raise ConfigWriteError("configVersionConflict", VERSION_CONFLICT)
    for edit in edits:
        apply_edit(doc, edit)
    _drop_empty_super_tables(doc)
    text = tomlkit.dumps(doc)
    try:
        table = parse_toml(text, str(config_path))
        check_table(codex_home, table, env)
    except ConfigError as exc:
        raise ConfigWriteError("configValidationError", f"Invalid configuration: {exc.message}") from None
    _save(config_path, text)
    overridden = overridden_metadata(edits, higher_layers)
    response = {"status": "okOverridden" if overridden else "ok", "version": layer_version(table),
                "filePath": str(config_path), "overriddenMetadata": overridden}
    return WriteOutcome(response=response, table=table, unknown_keys=unknown_dotted_keys(table))


def edits_from_params(raw_edits: Sequence[Mapping[str, JsonValue]]) -> list[ConfigEdit]:
    """`ConfigEdit` wire objects (`keyPath`, `value`, `mergeStrategy`) as domain edits."""
    return [ConfigEdit(e["keyPath"], e.get("value"), e.get("mergeStrategy", "replace")) for e in raw_edits]
