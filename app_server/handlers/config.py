"""config/read, config/value/write, config/batchWrite and configRequirements/read.

The domain (effective table, layer versions, in-place TOML edits) lives in app_server.config; these
handlers only pick the loaded config, call it, and tell the client about keys pycodex will ignore.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from app_server.config.effective import effective_config, read_layers
from app_server.config.errors import unknown_keys_warning
from app_server.context import HandlerContext
from app_server.lazy import LazyModule
from app_server.protocol import notices
from app_server.protocol import responses_config as rc
from app_server.protocol import server_info as p
from app_server.protocol import settings as s

if TYPE_CHECKING:  # config.write pulls in tomlkit (~0.1 s): imported on the first write, not at start-up
    from app_server.config import write as config_write
    from app_server.config.write import ConfigEdit
else:
    config_write = LazyModule("app_server.config.write")

__all__ = ["batch_write", "config_read", "requirements_read", "value_write"]


async def config_read(ctx: HandlerContext, params: p.ConfigReadParams) -> p.ConfigReadResponse:
    loaded = ctx.services.read_config()
    cwd = Path(params.cwd) if params.cwd else None
    effective = await asyncio.to_thread(effective_config, loaded, cwd, params.include_layers)
    return p.ConfigReadResponse.model_validate(effective)


async def _write(
    ctx: HandlerContext, edits: list[ConfigEdit], *, file_path: str | None, expected_version: str | None
) -> rc.ConfigWriteResponse:
    write_values = config_write.write_values

    services = ctx.services
    loaded = services.config
    flags = [layer for layer in read_layers(loaded, None) if layer.name.get("type") == "sessionFlags"]
    outcome = await asyncio.to_thread(
        write_values, loaded.config_path, edits, codex_home=services.codex_home,
        expected_version=expected_version,
        file_path=file_path, higher_layers=flags,
    )
    if outcome.unknown_keys:
        label = f"user ({loaded.config_path})"
        warning = unknown_keys_warning([(label, key) for key in outcome.unknown_keys])

        async def warn() -> None:  # after the response, as every other notice that follows a request
            await notices.send(ctx.session, notices.config_warning(warning.to_params()))

        ctx.session.after_response(warn)
    return rc.ConfigWriteResponse.model_validate(outcome.response)


async def value_write(ctx: HandlerContext, params: s.ConfigValueWriteParams) -> rc.ConfigWriteResponse:
    edits_from_params = config_write.edits_from_params

    edit = {"keyPath": params.key_path, "value": params.value, "mergeStrategy": params.merge_strategy}
    return await _write(ctx, edits_from_params([edit]), file_path=params.file_path,
                        expected_version=params.expected_version)


async def batch_write(ctx: HandlerContext, params: s.ConfigBatchWriteParams) -> rc.ConfigWriteResponse:
    edits_from_params = config_write.edits_from_params

    raw = [{"keyPath": e.key_path, "value": e.value, "mergeStrategy": e.merge_strategy} for e in params.edits]
    result = await _write(ctx, edits_from_params(raw), file_path=params.file_path,
                          expected_version=params.expected_version)
    if params.reload_user_config:
        # New threads read config.toml anyway; this makes the server's own view (model/list, the
        # default provider of the next request) current at once.
        ctx.services.reload_config()
    return result


async def requirements_read(ctx: HandlerContext, params: None) -> rc.ConfigRequirementsReadResponse:
    return rc.ConfigRequirementsReadResponse(supports_independent_speed_modes=True, requirements=None)
