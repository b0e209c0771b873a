"""`modelProvider/config/write` for custom gateways: the config.toml edits a settings patch makes.

Rules and messages observed on Codex 0.169.0: a new provider needs a name (trimmed, not a built-in
provider's) and an HTTP(S) base URL without credentials, query or fragment; its id is the name's
lowercase ASCII slug ("custom" when nothing is left), made unique with "-2", "-3"...; an omitted patch
field keeps its value and an explicit null clears it. Built-in providers (Bedrock, GCP) are not
implemented by pycodex, so their patches are refused rather than written and ignored.

    provider_id, edits = gateway_edits(settings, user_table)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from app_server.config.write import ConfigEdit, ConfigWriteError
from pycodex.json_types import JsonObj

BUILTIN_IDS = frozenset({"openai", "ollama", "lmstudio", "amazon-bedrock", "amazon-bedrock-runtime", "gcp",
                         "scripted"})
RESERVED_NAMES = frozenset({"openai", "ollama", "lmstudio", "amazon bedrock", "amazon bedrock mantle", "gcp"})
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

NAME_REQUIRED = "Enter a provider name."
NAME_RESERVED = "This name is reserved for a built-in provider. Enter a different custom provider name."
BASE_URL_REQUIRED = "A base URL is required to create a custom provider."
BAD_BASE_URL = "Enter an HTTP(S) base URL without credentials, a query, or a fragment."
BAD_ENV_KEY = "Invalid API key environment variable name."
BUILTIN_ID = "A custom provider or gateway cannot use a built-in provider ID."
UNKNOWN_ID = "Unknown provider ID."


def _invalid(message: str) -> ConfigWriteError:
    return ConfigWriteError("configValidationError", message)


def _name(value: object) -> str:
    name = value.strip() if isinstance(value, str) else ""
    if not name:
        raise _invalid(NAME_REQUIRED)
    if name.lower() in RESERVED_NAMES or name.lower() in BUILTIN_IDS:
        raise _invalid(NAME_RESERVED)
    return name


def _base_url(value: object) -> str:
    url = value.strip() if isinstance(value, str) else ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc or parts.query \
            or parts.fragment or "?" in url or "#" in url:
        raise _invalid(BAD_BASE_URL)
    return url


def _env_key(value: object) -> str:
    key = value.strip() if isinstance(value, str) else ""
    if not ENV_NAME.fullmatch(key):
        raise _invalid(BAD_ENV_KEY)
    return key


def slug(name: str, taken: set[str]) -> str:
    """The id Codex gives a new provider called `name`, unique among `taken`."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "custom"
    candidate, n = base, 1
    while candidate in taken or candidate in BUILTIN_IDS:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def gateway_edits(
    settings: Mapping[str, object], user_table: Mapping[str, object]
) -> tuple[str, list[ConfigEdit]]:
    """The provider id and config edits for one settings patch. Raises ConfigWriteError."""
    kind = settings.get("type")
    if kind != "customGateway":
        raise _invalid(f"pycodex does not support `{kind}` model providers; configure a custom gateway instead.")
    existing = user_table.get("model_providers")
    providers: Mapping[str, object] = existing if isinstance(existing, Mapping) else {}
    provider_id = settings.get("providerId")
    if provider_id is None:
        name = _name(settings.get("name"))
        if settings.get("baseUrl") is None:
            raise _invalid(BASE_URL_REQUIRED)
        table: JsonObj = {"name": name, "base_url": _base_url(settings["baseUrl"]), "wire_api": "responses"}
        if settings.get("envKey") is not None:
            table["env_key"] = _env_key(settings["envKey"])
        new_id = slug(name, set(providers))
        return new_id, [ConfigEdit(f"model_providers.{new_id}", table)]
    if provider_id in BUILTIN_IDS:
        raise _invalid(BUILTIN_ID)
    if provider_id not in providers:
        raise ConfigWriteError("configPathNotFound", UNKNOWN_ID)
    prefix = f"model_providers.{provider_id}"
    edits = [ConfigEdit(f"{prefix}.wire_api", "responses")]
    if "name" in settings:
        edits.append(ConfigEdit(f"{prefix}.name", _name(settings["name"])))
    for field, key, check in (("baseUrl", "base_url", _base_url), ("envKey", "env_key", _env_key)):
        if field in settings:
            value = settings[field]
            edits.append(ConfigEdit(f"{prefix}.{key}", None if value is None else check(value)))
    return str(provider_id), edits
