"""The response models stay true to Codex and to the handlers.

* Every served method has a response model in ``RESPONSE_MODELS`` (app_server/protocol/responses.py).
* Each model's JSON schema agrees with Codex 0.169's response schema for its method: the same property names,
  the same required ones and the same basic JSON types, nested objects included; descriptions are not compared.
  The differences that were looked at and kept are listed in ``REVIEWED`` with the reason.
* What the handlers answer today (driven over the in-memory edge) validates into the model and dumps back
  identically, key order included, so a handler can return ``Model.model_validate(its_dict)`` unchanged.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from app_server.protocol.base import to_wire
from app_server.protocol.responses import RESPONSE_MODELS
from app_server.protocol.schema_export import served_methods
from tests.support.appserver import OMIT
from tests.support.fake_model import message, model_config, run_turn
from tests.support.mcp_servers import CALC_SERVER
from tests.support.schema import SchemaValidator, snapshot_bundle
from tests.support.surface_requests import SURFACE_REQUESTS, fill

Schema = Mapping[str, Any]

#: Served methods that Codex 0.169 does not have (0.171 additions); their models are Codex 0.171's result types.
NOT_IN_0169 = {
    "thread/search/stream": "0.171: answers with ThreadSearchResponse, like thread/search",
    "modelProvider/default/set": "0.171: answers with the config write result (ConfigWriteResponse)",
    "thread/search/cancel": "0.171: answers {}",
    "thread/search/stream/cancel": "0.171: answers {}",
}

#: "Definition.path" -> why pycodex's model differs from Codex's schema there (reviewed).
REVIEWED: dict[str, str] = {
    "LoginAccountResponse": "Codex's is a oneOf tagged by `type`; ours is one object whose variant keys are "
    "left out unless set, so its properties are the union of the variants' and only `type` is required",
    # OMIT_IF_NONE fields: Codex skips the key when unset (not required, never null); ours are typed
    # `X | None` because None is how the model says "leave the key out", and it is never sent as null.
    "MigrationDetails.memory": "OMIT_IF_NONE: None leaves the key out, as Codex's skip_serializing_if does",
    "PluginSummary.availability": "OMIT_IF_NONE: None leaves the key out, as Codex's skip_serializing_if does",
    "ThreadItemEntry.outputDeferred": "pycodex never defers an item's output, so it never sends the flag",
}

_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})


class _Resolver:
    """Follows ``$ref`` in one schema document (Codex's bundle, or one model's schema with its ``$defs``)."""

    def __init__(self, root: Schema) -> None:
        self.root = root

    def deref(self, node: Any) -> Any:
        seen = 0
        while isinstance(node, Mapping) and "$ref" in node and seen < 20:
            target: Any = self.root
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node, seen = target, seen + 1
        return node

    def alternatives(self, node: Any) -> Iterator[Any]:
        """The leaf schemas of a node, through refs, single-entry ``allOf`` and ``anyOf``/``oneOf``."""
        for _, leaf in self.named_alternatives(node, None):
            yield leaf

    def named_alternatives(self, node: Any, name: str | None) -> Iterator[tuple[str | None, Any]]:
        """Like ``alternatives``, each with the name of the last definition followed to reach it."""
        if isinstance(node, Mapping) and "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
        node = self.deref(node)
        if not isinstance(node, Mapping):
            yield name, node
            return
        if "allOf" in node and len(node["allOf"]) == 1:
            yield from self.named_alternatives(node["allOf"][0], name)
            return
        for key in ("anyOf", "oneOf"):
            if key in node and "properties" not in node:
                for alt in node[key]:
                    yield from self.named_alternatives(alt, name)
                return
        yield name, node

    def types(self, node: Any) -> frozenset[str]:
        """The basic JSON types a node admits; every type when it admits anything (``true``, ``{}``)."""
        found: set[str] = set()
        for alt in self.alternatives(node):
            if not isinstance(alt, Mapping) or not (set(alt) & {"type", "enum", "const", "properties"}):
                return _TYPES
            kind = alt.get("type")
            if isinstance(kind, list):
                found |= set(kind)
            elif isinstance(kind, str):
                found.add(kind)
            elif "properties" in alt:
                found.add("object")
            else:  # a bare enum or const
                values = alt.get("enum", [alt.get("const")])
                found |= {_json_type(v) for v in values}
        return frozenset(found)

    def objects(self, node: Any) -> list[tuple[str | None, Schema]]:
        """The object schemas with properties a node leads to (through arrays and maps too), with their names."""
        out: list[tuple[str | None, Schema]] = []
        for name, alt in self.named_alternatives(node, None):
            if not isinstance(alt, Mapping):
                continue
            if "properties" in alt:
                out.append((name, alt))
            elif alt.get("type") == "array" or "items" in alt:
                out.extend(self.objects(alt.get("items", True)))
            elif isinstance(alt.get("additionalProperties"), Mapping):
                out.extend(self.objects(alt["additionalProperties"]))
        return out


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {str: "string", float: "number", type(None): "null"}.get(type(value), "object")


def _compare(
    ours: Schema, o_res: _Resolver, codex: Schema, c_res: _Resolver, where: str, seen: set[str]
) -> list[str]:
    """Differences between two object schemas (names, required, basic types), recursing into nested objects."""
    if where in REVIEWED or where in seen:
        return []
    seen.add(where)
    problems: list[str] = []
    o_props, c_props = dict(ours.get("properties", {})), dict(codex.get("properties", {}))
    for name in sorted(set(o_props) ^ set(c_props)):
        side = "only pycodex" if name in o_props else "only Codex"
        if f"{where}.{name}" not in REVIEWED:
            problems.append(f"{where}.{name}: property in {side}")
    o_req, c_req = set(ours.get("required", [])), set(codex.get("required", []))
    for name in sorted((o_req ^ c_req) & set(o_props) & set(c_props)):
        # A field Codex requires that we give a default is still always sent (only OMIT_IF_NONE fields are
        # left out, and those are never required): the default only makes validation lenient. Only a null
        # default where Codex forbids null could send what Codex never does.
        o_types = o_res.types(o_props[name])
        lenient = name in c_req and ("null" not in o_types or "null" in c_res.types(c_props[name]))
        if not lenient and f"{where}.{name}" not in REVIEWED:
            problems.append(f"{where}.{name}: required in {'pycodex' if name in o_req else 'Codex'} only")
    for name in sorted(set(o_props) & set(c_props)):
        path = f"{where}.{name}"
        if path in REVIEWED:
            continue
        o_types, c_types = o_res.types(o_props[name]), c_res.types(c_props[name])
        if _TYPES not in (o_types, c_types) and o_types != c_types:
            problems.append(f"{path}: types {sorted(o_types)} vs Codex {sorted(c_types)}")
        o_objs, c_objs = o_res.objects(o_props[name]), c_res.objects(c_props[name])
        if len(o_objs) == 1 and len(c_objs) == 1:
            nested = c_objs[0][0] or path
            problems += _compare(o_objs[0][1], o_res, c_objs[0][1], c_res, nested, seen)
    return problems


@pytest.fixture(scope="module")
def codex() -> SchemaValidator:
    return SchemaValidator(snapshot_bundle("experimental"), source="tests/data experimental snapshot",
                           experimental=True)


def test_every_served_method_has_a_response_model() -> None:
    served = {method.method for method in served_methods(experimental=True)}
    assert sorted(served - set(RESPONSE_MODELS)) == []
    assert sorted(set(RESPONSE_MODELS) - served) == []
    for method in RESPONSE_MODELS:
        assert issubclass(RESPONSE_MODELS[method], BaseModel), method


def test_response_models_agree_with_codex_schema(codex: SchemaValidator) -> None:
    bundle = snapshot_bundle("experimental")
    c_res = _Resolver(bundle)
    problems: list[str] = []
    seen: set[str] = set()
    for method, model in RESPONSE_MODELS.items():
        if method not in codex.response_types:
            assert method in NOT_IN_0169, f"{method} is not in Codex 0.169's schema: say why in NOT_IN_0169"
            continue
        name = codex.response_type(method)
        where = "v2/" if name in bundle["definitions"]["v2"] else ""
        codex_schema = c_res.deref({"$ref": f"#/definitions/{where}{name}"})
        ours = model.model_json_schema(by_alias=True)
        if name in REVIEWED:
            continue
        problems += _compare(ours, _Resolver(ours), codex_schema, c_res, name, seen)
    assert not problems, "\n".join(problems)


def test_reviewed_exceptions_are_still_needed(codex: SchemaValidator) -> None:
    """Every REVIEWED entry names a definition some response model leads to (no stale excuses)."""
    names = {codex.response_type(m) for m in RESPONSE_MODELS if m not in NOT_IN_0169}
    bundle_text = json.dumps(snapshot_bundle("experimental"))
    for key in REVIEWED:
        top = key.split(".", 1)[0]
        assert top in names or f'"{top}"' in bundle_text, key


# ---- round trip: what the handlers answer today ----------------------------------------------------------


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


#: Hand-built results for shapes the offline run cannot reach (no account, no marketplace, no search hit).
BUILT: list[tuple[str, dict[str, Any]]] = [
    ("account/login/start", {"type": "chatgpt", "loginId": "l1", "authUrl": "https://auth.example/x"}),
    ("account/login/start", {"type": "chatgptDeviceCode", "loginId": "l2",
                             "verificationUrl": "https://auth.example/d", "userCode": "ABCD"}),
    ("fuzzyFileSearch", {"files": [{"root": "/r", "path": "a/b.txt", "match_type": "file", "file_name": "b.txt",
                                    "score": 12, "indices": [0, 2]}]}),
    ("environment/status", {"status": "disconnected", "error": "gone"}),
    # As hooks/list reports a hooks file it cannot parse (handlers/hooks.py).
    ("hooks/list", {"data": [{"cwd": "/w", "hooks": [], "warnings": [],
                              "errors": [{"path": "/h/hooks.json", "message": "failed to parse hooks: x"}]}]}),
    # remoteControl/enable and /disable answer with the status read's shape (handlers/misc.py remote_status).
    ("remoteControl/enable", {"status": "connecting", "serverName": "vm", "installationId": "i",
                              "environmentId": None}),
    ("config/value/write", {"status": "okOverridden", "version": "sha256:0", "filePath": "/h/config.toml",
                            "overriddenMetadata": {"message": "m", "effectiveValue": 1, "overridingLayer": {
                                "name": {"type": "sessionFlags"}, "version": "v"}}}),
]


async def _handler_results(client: Any, workspace: Path, tmp: Path) -> list[tuple[str, Any]]:
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, tid, "hello")
    calls: list[tuple[str, Any]] = [(m, fill(p, str(tmp)) if p is not None else None) for m, p in SURFACE_REQUESTS]
    calls += [
        ("thread/memory/read", {"threadId": tid}),
        ("memory/status", {}),
        ("thread/search", {"searchTerm": "hello"}),
        ("thread/searchOccurrences", {"threadId": tid, "searchTerm": "hello"}),
        ("thread/attachment/add", {"threadId": tid, "attachmentType": "test", "identityKey": "k",
                                   "payload": {"a": 1}}),
        ("thread/attachment/list", {"threadId": tid}),
        ("thread/attachmentOwner/list", {"attachmentType": "test", "identityKey": "k"}),
        ("thread/queue/list", {"threadId": tid}),
        ("fuzzyFileSearch", {"query": "note", "roots": [str(workspace)]}),
        ("fuzzyFileSearch/sessionStart", {"sessionId": "s1", "roots": [str(workspace)]}),
        ("fuzzyFileSearch/sessionStop", {"sessionId": "s1"}),
        ("modelProvider/list", {}),
        ("modelProvider/capabilities/read", {}),
        ("configRequirements/read", None),
        ("mcpServerStatus/list", {}),
        ("config/mcpServer/reload", None),
        ("config/value/write", {"keyPath": "model_verbosity", "value": "low", "mergeStrategy": "replace"}),
        ("config/batchWrite", {"edits": [{"keyPath": "model_verbosity", "value": "medium",
                                          "mergeStrategy": "replace"}]}),
        ("modelProvider/config/write", {"settings": {"type": "customGateway", "name": "My GW",
                                                     "baseUrl": "http://127.0.0.1:9/v1", "envKey": "GW_KEY"}}),
        ("review/start", {"threadId": tid, "target": {"type": "custom", "instructions": "review"}}),
    ]
    results: list[tuple[str, Any]] = []
    for method, params in calls:
        response = await client.request(method, OMIT if params is None else params, timeout=30)
        if "result" in response:
            results.append((method, response["result"]))
        if method == "review/start" and "result" in response:
            await client.wait_notification("turn/completed", timeout=30)
    return results


async def test_handler_results_round_trip(
    app_server: Any, fake_model: Any, tmp_path: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"})
    home = tmp_path / "home"
    model_config(home, model.url)
    client = await app_server(codex_home=home, experimental=True)
    tmp = tmp_path / "scratch"
    tmp.mkdir()
    results = await _handler_results(client, workspace, tmp) + BUILT
    covered = {method for method, _ in results}
    assert len(covered) >= 60, sorted(covered)  # the run must keep reaching most of the dict-built answers
    mismatches = []
    for method, result in results:
        dumped = to_wire(RESPONSE_MODELS[method].model_validate(result))
        # json.dumps keeps key order, so this checks the order Codex-compatible clients see as well.
        if json.dumps(dumped) != json.dumps(result):
            mismatches.append(f"{method}:\n  handler {json.dumps(result)[:400]}\n  model   {json.dumps(dumped)[:400]}")
    assert not mismatches, "\n".join(mismatches)


def _marketplace(root: Path) -> Path:
    """A local marketplace with one plugin holding one skill (as tests of the plugin surface build it)."""
    (root / ".agents/plugins").mkdir(parents=True)
    (root / ".agents/plugins/marketplace.json").write_text(json.dumps(
        {"name": "local-mkt", "plugins": [{"name": "p1", "source": {"source": "local", "path": "./plugins/p1"}}]}))
    plugin = root / "plugins/p1"
    (plugin / ".codex-plugin").mkdir(parents=True)
    (plugin / ".codex-plugin/plugin.json").write_text(json.dumps({"name": "p1", "version": "1.0.0",
                                                                  "description": "d", "keywords": ["k"]}))
    (plugin / "skills/s1").mkdir(parents=True)
    (plugin / "skills/s1/SKILL.md").write_text("---\nname: s1\ndescription: skill one\n---\nbody\n")
    return root


async def test_populated_results_round_trip(app_server: Any, tmp_path: Path, workspace: Path) -> None:
    """The same check on answers with content: a marketplace and its plugin, a queue with entries."""
    client = await app_server(experimental=True)
    market = _marketplace(tmp_path / "mkt")
    manifest = str(market / ".agents/plugins/marketplace.json")
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    calls: list[tuple[str, Any]] = [
        ("marketplace/add", {"source": str(market)}),
        ("plugin/list", {}),
        ("plugin/search", {"searchTerm": "p1"}),
        ("plugin/read", {"pluginName": "p1", "marketplacePath": manifest}),
        ("plugin/install", {"pluginName": "p1", "marketplacePath": manifest}),
        ("plugin/installed", {}),
        ("plugin/uninstall", {"pluginId": "p1@local-mkt"}),
        ("marketplace/remove", {"marketplaceName": "local-mkt"}),
        ("thread/queue/add", {"threadId": tid, "clientUserMessageId": "c1", "input": _text("one")}),
        ("thread/queue/add", {"threadId": tid, "clientUserMessageId": "c2", "input": _text("two")}),
        ("thread/queue/list", {"threadId": tid}),
    ]
    results: list[tuple[str, Any]] = []
    for method, params in calls:
        response = await client.request(method, params, timeout=30)
        assert "result" in response, (method, response)
        results.append((method, response["result"]))
    queued = results[-1][1]["data"][-1]["id"]
    for method, params in [
        ("thread/queue/update", {"threadId": tid, "queuedSubmissionId": queued, "input": _text("three")}),
        ("thread/queue/delete", {"threadId": tid, "queuedSubmissionId": queued}),
    ]:
        results.append((method, await client.call(method, params)))
    assert any(r["marketplaces"] and r["marketplaces"][0]["plugins"] for m, r in results if m == "plugin/list")
    mismatches = []
    for method, result in results:
        dumped = to_wire(RESPONSE_MODELS[method].model_validate(result))
        if json.dumps(dumped) != json.dumps(result):
            mismatches.append(f"{method}:\n  handler {json.dumps(result)[:600]}\n  model   {json.dumps(dumped)[:600]}")
    assert not mismatches, "\n".join(mismatches)


async def test_mcp_results_round_trip(app_server: Any, codex_home: Path, workspace: Path) -> None:
    """The MCP answers with content: a tool call, the server status list, a resource read."""
    args = json.dumps([str(CALC_SERVER), "stdio", f"marker-{uuid.uuid4().hex}"])
    model_config(codex_home, "http://127.0.0.1:9/v1",
                 extra=f"\n[mcp_servers.calc]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n")
    client = await app_server()
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    results: list[tuple[str, Any]] = []
    for method, params in [
        ("mcpServer/tool/call", {"threadId": tid, "server": "calc", "tool": "add", "arguments": {"a": 1, "b": 2}}),
        ("mcpServerStatus/list", {"threadId": tid}),
        ("mcpServer/resource/read", {"server": "calc", "uri": "calc://greeting"}),
    ]:
        results.append((method, await client.call(method, params, timeout=30)))
    mismatches = []
    for method, result in results:
        dumped = to_wire(RESPONSE_MODELS[method].model_validate(result))
        if json.dumps(dumped) != json.dumps(result):
            mismatches.append(f"{method}:\n  handler {json.dumps(result)[:600]}\n  model   {json.dumps(dumped)[:600]}")
    await client.call("thread/unsubscribe", {"threadId": tid})
    assert not mismatches, "\n".join(mismatches)
