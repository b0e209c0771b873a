"""Codex 0.169.0 protocol schema: locating the reference binary, loading its JSON schema, validating messages.

The schema comes from the snapshot in ``tests/data/schema`` (what `codex app-server generate-json-schema`
wrote, recorded by ``scripts/record_reference.py``), so validation needs no npm. A `codex`-marked test checks
that the snapshot still equals what the live binary generates.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import jsonschema  # type: ignore[import-untyped]
import jsonschema_rs
import referencing
import referencing.jsonschema
from jsonschema.exceptions import ValidationError, best_match  # type: ignore[import-untyped]

from tests.support.paths import REPO_ROOT as REPO_ROOT  # re-exported: older tests import it from here
from tests.support.paths import SCHEMA_SNAPSHOT

CODEX_BIN_REL = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
BUNDLE_FILE = "codex_app_server_protocol.schemas.json"
_BUNDLE_URI = "urn:pycodex:codex-app-server-protocol"

# Client methods whose response type does not follow `<X>Params -> <X>Response` because they take no params or
# share a response type. Taken from codex-rs `client_request_definitions!`; `SchemaValidator` refuses to load if
# any of these names is missing from the bundle, and tests check that every *Response definition is claimed.
RESPONSE_OVERRIDES: dict[str, str] = {
    "account/gatewayOAuth/cancel": "GatewayOAuthCancelResponse",
    "account/logout": "LogoutAccountResponse",
    "account/securitySetup/read": "GetAccountSecuritySetupResponse",
    "account/workspaceMessages/read": "GetWorkspaceMessagesResponse",
    "accountSession/list": "AccountSessionsResponse",
    "config/batchWrite": "ConfigWriteResponse",
    "config/mcpServer/reload": "McpServerRefreshResponse",
    "config/value/write": "ConfigWriteResponse",
    "configRequirements/read": "ConfigRequirementsReadResponse",
    "externalAgentConfig/import/readHistories": "ExternalAgentConfigImportHistoriesReadResponse",
    "memory/reset": "MemoryResetResponse",
    "remoteControl/status/read": "RemoteControlStatusReadResponse",
    "rollout/compress": "RolloutCompressResponse",
    "windowsSandbox/readiness": "WindowsSandboxReadinessResponse",
}

_INT_RANGES = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
}

LineKind = Literal["response", "error", "notification", "server_request"]


def find_codex_bin() -> Path | None:
    """The reference binary: `$PYCODEX_CODEX_BIN`, else the npm-installed copy under the repository."""
    env = os.environ.get("PYCODEX_CODEX_BIN")
    path = Path(env) if env else REPO_ROOT / CODEX_BIN_REL
    return path if path.is_file() and os.access(path, os.X_OK) else None


def generate_schema(
    codex_bin: Path, out_dir: Path, *, experimental: bool = False, timeout: float = 60
) -> Path:
    """Run `codex app-server generate-json-schema` into `out_dir` and return it."""
    argv = [str(codex_bin), "app-server", "generate-json-schema", "--out", str(out_dir)]
    if experimental:
        argv.append("--experimental")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0 or not (out_dir / BUNDLE_FILE).is_file():
        raise RuntimeError(f"schema generation failed (rc={proc.returncode}): {proc.stderr.strip()[:2000]}")
    return out_dir


def _int_format(fmt: str) -> Any:
    low, high = _INT_RANGES[fmt]

    def check(value: object) -> bool:
        # Non-integers are the `type` keyword's business; formats only bound the range.
        return not isinstance(value, int) or isinstance(value, bool) or low <= value <= high

    return check


def _format_checker() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker(formats=())
    for fmt in _INT_RANGES:
        checker.checks(fmt)(_int_format(fmt))
    return checker


def _precheck_definitions(definitions: Any) -> Any:
    """``definitions`` for the Rust pre-check: each integer format (which only the Python checker reads, for
    any instance type) spelled as the ``minimum``/``maximum`` it stands for, so the pre-check is never
    laxer than the Python validator on the ranges."""
    if isinstance(definitions, list):
        return [_precheck_definitions(item) for item in definitions]
    if not isinstance(definitions, dict):
        return definitions
    out = {key: _precheck_definitions(value) for key, value in definitions.items()}
    fmt = out.get("format")
    if isinstance(fmt, str) and fmt in _INT_RANGES:
        low, high = _INT_RANGES[fmt]
        del out["format"]
        out["minimum"] = max(out.get("minimum", low), low)
        out["maximum"] = min(out.get("maximum", high), high)
    return out


def _method_table(bundle: Mapping[str, Any], union: str) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """A `oneOf` union of `{method: {enum: [m]}, params: ...}` -> {m: (JSON pointer of its params, schema)}."""
    table: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for index, variant in enumerate(bundle["definitions"][union]["oneOf"]):
        props = variant["properties"]
        (method,) = props["method"]["enum"]
        pointer = f"#/definitions/{union}/oneOf/{index}/properties/params"
        table[method] = (pointer, props["params"]) if "params" in props else ("", {"type": "null"})
    return table


def _params_name(params_schema: Mapping[str, Any]) -> str | None:
    """The `<X>Params` definition named by a params schema (`$ref`, or `anyOf [$ref, null]` when optional)."""
    refs = [params_schema.get("$ref")] + [alt.get("$ref") for alt in params_schema.get("anyOf", [])]
    names = [ref.rsplit("/", 1)[-1] for ref in refs if ref]
    return names[0] if len(names) == 1 else None


@dataclass(frozen=True)
class Violation:
    path: str
    message: str


class SchemaValidator:
    """Validates server->client messages against one generated bundle (stable or `--experimental`)."""

    def __init__(self, bundle: Mapping[str, Any], *, source: str, experimental: bool = False) -> None:
        self.source = source
        self.experimental = experimental
        self._top: Mapping[str, Any] = bundle["definitions"]
        self._v2: Mapping[str, Any] = self._top["v2"]
        resource = referencing.Resource.from_contents(
            bundle, default_specification=referencing.jsonschema.DRAFT7
        )
        self._registry: referencing.Registry[Any] = referencing.Registry().with_resource(
            _BUNDLE_URI, resource
        )
        self._formats = _format_checker()
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        # Every server line of every test is validated: the Python validator takes ~0.4 ms a message (about
        # a seventh of an in-memory test's CPU), jsonschema-rs under a microsecond. So a message the Rust
        # validator accepts is done; one it refuses goes to the Python validator, which alone decides and
        # words the violations (test_schema_support.py pins that the two agree).
        self._precheck_defs = _precheck_definitions(bundle["definitions"])
        self._prechecks: dict[str, jsonschema_rs.Draft7Validator] = {}
        self.request_params = _method_table(bundle, "ClientRequest")
        self.notification_params = _method_table(bundle, "ServerNotification")
        self.server_request_params = _method_table(bundle, "ServerRequest")
        self.response_types = self._response_table()
        self.server_request_response_types = {
            method: self._derive(method, schema) for method, (_, schema) in self.server_request_params.items()
        }

    # -- tables --------------------------------------------------------------------------------------------

    def definition_names(self) -> set[str]:
        return {k for k in self._top if k != "v2"} | set(self._v2)

    def _pointer(self, name: str) -> str:
        if name in self._top and name != "v2":
            return f"#/definitions/{name}"
        if name in self._v2:
            return f"#/definitions/v2/{name}"
        raise KeyError(f"definition {name!r} is not in the Codex schema bundle {self.source}")

    def _derive(self, method: str, params_schema: Mapping[str, Any]) -> str | None:
        if method in RESPONSE_OVERRIDES:
            return RESPONSE_OVERRIDES[method]
        params = _params_name(params_schema)
        if params and params.endswith("Params"):
            candidate = params.removesuffix("Params") + "Response"
            if candidate in self.definition_names():
                return candidate
        return None

    def _response_table(self) -> dict[str, str]:
        table: dict[str, str] = {}
        missing: list[str] = []
        for method, (_, schema) in self.request_params.items():
            name = self._derive(method, schema)
            if name is None or name not in self.definition_names():
                missing.append(f"{method} -> {name}")
            else:
                table[method] = name
        if missing:
            raise RuntimeError(f"client methods without a known response type: {missing}")
        return table

    # -- validation ----------------------------------------------------------------------------------------

    def _validator(self, pointer: str) -> jsonschema.protocols.Validator:
        found = self._validators.get(pointer)
        if found is None:
            schema = {"$ref": _BUNDLE_URI + pointer} if pointer else {"type": "null"}
            found = jsonschema.Draft7Validator(schema, registry=self._registry, format_checker=self._formats)
            self._validators[pointer] = found
        return found

    def _precheck(self, pointer: str) -> jsonschema_rs.Draft7Validator:
        found = self._prechecks.get(pointer)
        if found is None:
            schema = {"$ref": pointer, "definitions": self._precheck_defs} if pointer else {"type": "null"}
            found = jsonschema_rs.Draft7Validator(schema, validate_formats=False)
            self._prechecks[pointer] = found
        return found

    def _resolve(self, definition: str) -> str:
        """A definition name as its JSON pointer; a pointer (or "", no params) as it is."""
        return definition if not definition or definition.startswith("#") else self._pointer(definition)

    def accepted_by_precheck(self, definition: str, instance: object) -> bool:
        """Whether the Rust pre-check accepts `instance` (False also when it cannot read the instance)."""
        pointer = self._resolve(definition)
        try:
            return bool(self._precheck(pointer).is_valid(instance))
        except (ValueError, TypeError, OverflowError):
            return False

    def violations(self, definition: str, instance: object) -> list[Violation]:
        """All violations of `instance` against a definition name (or a `#/...` pointer), most relevant first."""
        pointer = self._resolve(definition)
        if self.accepted_by_precheck(pointer, instance):
            return []
        return self.python_violations(pointer, instance)

    def python_violations(self, definition: str, instance: object) -> list[Violation]:
        """:meth:`violations` by the Python validator alone (no pre-check)."""
        pointer = self._resolve(definition)
        errors = list(self._validator(pointer).iter_errors(instance))
        if not errors:
            return []
        best = best_match(errors)
        rest = [e for e in errors if e is not best]
        return [_violation(best)] + [_violation(e) for e in rest]

    def check(self, definition: str, instance: object, *, what: str, label: str = "") -> None:
        found = self.violations(definition, instance)
        if found:
            first = found[0]
            more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
            raise AssertionError(
                f"{what}: does not match {label or definition} at {first.path}: {first.message}{more}; "
                f"instance: {_short(instance)}"
            )

    def response_type(self, method: str) -> str:
        try:
            return self.response_types[method]
        except KeyError:
            kind = "experimental " if self.experimental else ""
            raise AssertionError(f"method {method!r} is not a known {kind}Codex client request") from None

    def check_response(self, method: str, result: object) -> None:
        self.check(self.response_type(method), result, what=f"response to {method!r}")

    def check_request_params(self, method: str, params: object) -> None:
        """A client request's params (for tests that want to be sure they send what Codex accepts)."""
        self._check_params(self.request_params, "client request", method, params)

    def check_notification(self, method: str, params: object) -> None:
        self._check_params(self.notification_params, "notification", method, params)

    def check_server_request(self, method: str, params: object) -> None:
        self._check_params(self.server_request_params, "server request", method, params)

    def _check_params(
        self, table: Mapping[str, tuple[str, Mapping[str, Any]]], what: str, method: str, params: object
    ) -> None:
        if method not in table:
            kind = "experimental " if self.experimental else ""
            raise AssertionError(f"{what} {method!r} is not in the {kind}Codex schema")
        pointer, schema = table[method]
        label = _params_name(schema) or json.dumps(schema)[:80]
        self.check(pointer, params, what=f"{what} {method!r} params", label=label)

    def check_client_response(self, server_method: str, result: object) -> None:
        """A client's answer to a server request (useful to keep test scripts honest)."""
        name = self.server_request_response_types.get(server_method)
        if name is None:
            raise AssertionError(f"no response type known for server request {server_method!r}")
        self.check(name, result, what=f"client response to {server_method!r}")

    def check_error(self, obj: object) -> None:
        self.check("JSONRPCError", obj, what="error response")
        assert isinstance(obj, dict)
        _exact_keys(obj, {"error", "id"}, "error response")
        _exact_keys(obj["error"], {"code", "message"}, "error object", optional=frozenset({"data"}))

    def check_server_line(self, msg: Mapping[str, Any], request_methods: Mapping[int | str, str]) -> LineKind:
        """Validate one server->client message by shape; `request_methods` maps our request ids to methods."""
        if not isinstance(msg, Mapping):
            raise AssertionError(f"server message is not a JSON object: {_short(msg)}")
        if "jsonrpc" in msg:
            raise AssertionError(f"server message carries 'jsonrpc' (Codex never sends it): {_short(msg)}")
        if "method" in msg and "id" in msg:
            _exact_keys(msg, {"method", "id", "params"}, "server request")
            if not isinstance(msg["id"], int) or isinstance(msg["id"], bool):
                raise AssertionError(f"server request id must be an integer: {_short(msg)}")
            self.check_server_request(msg["method"], msg["params"])
            return "server_request"
        if "method" in msg:
            _exact_keys(msg, {"method", "params", "emittedAtMs"}, "notification")
            stamp = msg["emittedAtMs"]
            if not isinstance(stamp, int) or isinstance(stamp, bool) or stamp <= 0:
                raise AssertionError(f"notification emittedAtMs must be a positive integer: {_short(msg)}")
            self.check_notification(msg["method"], msg["params"])
            return "notification"
        if "error" in msg:
            self.check_error(dict(msg))
            return "error"
        if "result" in msg:
            _exact_keys(msg, {"id", "result"}, "response")
            self.check("JSONRPCResponse", dict(msg), what="response envelope")
            method = request_methods.get(msg["id"])
            if method is None:
                raise AssertionError(f"response to an id the client never used: {_short(msg)}")
            self.check_response(method, msg["result"])
            return "response"
        raise AssertionError(f"server message has neither method, result nor error: {_short(msg)}")


@dataclass(frozen=True)
class SchemaPair:
    """The stable and the `--experimental` bundle; clients pick by their `experimentalApi` capability."""

    stable: SchemaValidator
    experimental: SchemaValidator

    def for_capability(self, experimental_api: bool) -> SchemaValidator:
        return self.experimental if experimental_api else self.stable


def snapshot_bundle(flavour: Literal["stable", "experimental"]) -> dict[str, Any]:
    """The recorded bundle (`codex_app_server_protocol.schemas.json`) of one flavour from tests/data."""
    path = SCHEMA_SNAPSHOT / f"{flavour}.schemas.json.gz"
    bundle: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return bundle


def load_schema_pair() -> SchemaPair:
    """Both validators, built from the recorded snapshot."""
    return SchemaPair(
        SchemaValidator(snapshot_bundle("stable"), source="tests/data stable snapshot"),
        SchemaValidator(snapshot_bundle("experimental"), source="tests/data experimental snapshot", experimental=True),
    )


def _exact_keys(
    obj: Mapping[str, Any], required: set[str], what: str, optional: frozenset[str] = frozenset()
) -> None:
    keys = set(obj)
    if not required <= keys or not keys <= required | optional:
        raise AssertionError(f"{what}: keys {sorted(keys)}, expected {sorted(required)}: {_short(obj)}")


def _violation(error: ValidationError) -> Violation:
    return Violation(path=error.json_path, message=error.message[:500])


def _short(obj: object, limit: int = 600) -> str:
    text = json.dumps(obj, default=repr)
    return text if len(text) <= limit else text[:limit] + "..."
