"""Shared pieces of the `pycodex exec` subprocess tests: the run, its result, a home with a fake model."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModel, message, model_config
from tests.support.procs import stop_process

__all__ = ["DEAD_MODEL_URL", "METADATA_WARNING", "RUN_TIMEOUT_S", "Env", "Result", "make_env", "reply", "user_texts"]

DEAD_MODEL_URL = "http://127.0.0.1:9/v1"
#: Codex 0.169 warns at every turn on a model outside its catalog, such as the tests' mock-model.
METADATA_WARNING = ("Model metadata for `mock-model` not found. Defaulting to fallback metadata; "
                    "this can degrade performance and cause issues.")
RUN_TIMEOUT_S = 60.0


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines()]

    @property
    def types(self) -> list[str]:
        return [e["type"] + (":" + e["item"]["type"] if "item" in e else "") for e in self.events]


@dataclass
class Env:
    home: Path
    work: Path
    model: FakeModel | None = None

    async def exec(self, *args: str, stdin: str | None = None, cwd: Path | None = None,
                   env: dict[str, str] | None = None, binary: Path | None = None) -> Result:
        """``pycodex exec ARGS`` (or ``BINARY exec ARGS``, e.g. the reference Codex)."""
        argv = [str(binary)] if binary is not None else [sys.executable, "-m", "pycodex"]
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "PYCODEX_", "OPENAI_"))}
        full_env.update(CODEX_HOME=str(self.home), CODEX_API_KEY="dummy", PYCODEX_FSYNC="0", **(env or {}))
        proc = await asyncio.create_subprocess_exec(
            *argv, "exec", *args, cwd=cwd or self.work, env=full_env,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(stdin.encode() if stdin is not None else None), RUN_TIMEOUT_S)
        finally:
            await stop_process(proc)
        assert proc.returncode is not None
        return Result(proc.returncode, out.decode(), err.decode())

    def requests(self) -> list[dict[str, Any]]:
        assert self.model is not None
        return [r for r in self.model.requests() if r["path"].endswith("/responses")]


@pytest.fixture
async def make_env(tmp_path: Path) -> AsyncIterator[Any]:
    models: list[FakeModel] = []
    made = 0

    async def make(script: list[Any] | dict[str, Any] | None) -> Env:
        nonlocal made
        made += 1
        work = tmp_path / f"work{made}"
        work.mkdir()
        env = Env(home=tmp_path / f"home{made}", work=work)
        if script is None:
            model_config(env.home, DEAD_MODEL_URL)
            return env
        env.model = await FakeModel.start(script, tmp_path / f"model{made}")
        models.append(env.model)
        model_config(env.home, env.model.url)
        return env

    yield make
    for model in models:
        await model.stop()


def reply(text: str) -> dict[str, Any]:
    return {"output": [message(text)]}


def user_texts(request: dict[str, Any]) -> list[str]:
    return [c["text"] for item in request["body"]["input"] if item.get("role") == "user"
            for c in item["content"] if c.get("type") == "input_text"]
