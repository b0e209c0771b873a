"""rollout/compress: start Codex 0.169's background pass that zstd-compresses cold rollouts
(``app_server/store/compression.py``) and answer ``{}`` at once, as Codex does: the answer acknowledges the
trigger, not the work (a recent pass, or one still running here or in Codex, makes this one skip)."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.protocol import thread_experimental as p
from app_server.store.compression import compress_cold

__all__ = ["rollout_compress"]


async def rollout_compress(ctx: HandlerContext, params: None) -> p.RolloutCompressResponse:
    home = ctx.services.codex_home
    ctx.services.spawn(asyncio.to_thread(compress_cold, home), name="rollout-compress")
    return p.RolloutCompressResponse()
