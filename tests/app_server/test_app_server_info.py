"""The informational requests real frontends make at startup, validated against Codex's schema."""

from __future__ import annotations


async def test_startup_queries_answer_in_codex_shapes(app_server) -> None:  # type: ignore[no-untyped-def]
    client = await app_server(experimental=True)
    models = await client.call("model/list", {})
    assert models["data"] and models["data"][0]["isDefault"] is True
    assert models["data"][0]["model"] == "gpt-6.1-sol"  # Codex lists its catalog whatever the provider
    account = await client.call("account/read", {"refreshToken": False})
    assert account["account"] is None and account["requiresOpenaiAuth"] is False
    config = await client.call("config/read", {"includeLayers": True})
    assert config["config"]["model"] == "mock-model"
    assert config["origins"]["model"]["name"]["type"] == "user"
    assert config["layers"][0]["config"]["model_provider"] == "mock_provider"
    reqs = await client.call("configRequirements/read")
    assert reqs["requirements"] is None and reqs["supportsIndependentSpeedModes"] is True
