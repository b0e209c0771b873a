"""``pycodex doctor``: one line per check of this machine's setup, each failure with its fix.

Checks: the config (the loader's own fail-closed error, with file:line), the model provider (reachable,
key accepted: one bounded ``GET {base_url}/models``; the key is sent, never printed), the sandbox
(Landlock), the Codex binary the compat harness would use, and the exec-server or relay when one is
configured. Exit status 1 when any check fails.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from app_server.config import ConfigError, LoadedConfig, load_config, resolve_codex_home
from app_server.model.provider import SCRIPTED_PROVIDER_ID
from pycodex.platform.landlock import landlock_abi

__all__ = ["Check", "codex_binary", "run_checks", "run_doctor"]

TIMEOUT_S = 5.0
OK, WARN, FAIL, SKIP = "ok", "warn", "FAIL", "skip"
RELAY_VAR = "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL"
EXEC_SERVER_VAR = "CODEX_EXEC_SERVER_URL"


@dataclass(frozen=True)
class Check:
    status: str  # OK | WARN | FAIL | SKIP
    name: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        fix = f"  -> fix: {self.fix}" if self.fix and self.status in (FAIL, WARN) else ""
        return f"{self.status:<4} {self.name:<9} {self.detail}{fix}"


def codex_binary(root: Path) -> Path:
    """Where npm puts the Codex binary under ``root`` (the lookup compat_tests/support/builds.py uses)."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), "x64")
    triple = "x86_64" if arch == "x64" else "aarch64"
    return root / f"node_modules/@openai/codex-linux-{arch}/vendor/{triple}-unknown-linux-musl/bin/codex"


def check_config(home: Path, overrides: Sequence[str], env: Mapping[str, str]) -> tuple[Check, LoadedConfig | None]:
    try:
        config = load_config(home, overrides, env=env)
    except ConfigError as exc:
        return Check(FAIL, "config", exc.message.strip().splitlines()[0], "correct that value (or the -c flag)"), None
    if config.load_error is not None:
        return Check(FAIL, "config", config.load_error.message.strip().splitlines()[0],
                     f"correct {config.config_path} at that line; until then no thread can start"), config
    where = str(config.config_path) if config.config_path.is_file() else f"no {config.config_path} (defaults)"
    unknown = [w.summary for w in config.warnings if "unknown" in w.summary.lower()]
    if unknown:
        return Check(WARN, "config", f"{where}: {unknown[0]}", "remove or rename the unknown keys"), config
    return Check(OK, "config", where), config


def check_provider(config: LoadedConfig | None, env: Mapping[str, str]) -> Check:
    if config is None:
        return Check(SKIP, "provider", "no usable config")
    provider = config.provider
    if provider.id == SCRIPTED_PROVIDER_ID:
        return Check(OK, "provider", "offline scripted model (no network)")
    key = env.get(provider.env_key) if provider.env_key else None
    if provider.env_key and not key:
        # A turn would fail the same way: say how to get a model, and how to run without one.
        return Check(FAIL, "provider", f"{provider.id}: ${provider.env_key} is not set",
                     f"export {provider.env_key}=<your key> (or set model_provider in config.toml; offline: "
                     "`pycodex demo` or `--model scripted`)")
    url = f"{str(provider.base_url).rstrip('/')}/models"
    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        with httpx.Client(timeout=TIMEOUT_S, trust_env=False) as http:
            status = http.get(url, headers=headers, params=dict(provider.query_params)).status_code
    except httpx.HTTPError as exc:
        return Check(FAIL, "provider", f"{provider.id}: cannot reach {url}: {type(exc).__name__}",
                     "check base_url in config.toml and that the server is up")
    if status in (401, 403):
        return Check(FAIL, "provider", f"{provider.id}: {url} refused the key (HTTP {status})",
                     f"check ${provider.env_key}")
    if status >= 500:
        return Check(FAIL, "provider", f"{provider.id}: {url} answered HTTP {status}", "the provider is failing; retry later")
    return Check(OK, "provider", f"{provider.id}: {url} reachable (HTTP {status})")


def check_sandbox(config: LoadedConfig | None) -> Check:
    abi = landlock_abi()
    if abi > 0:
        return Check(OK, "sandbox", f"Landlock ABI {abi}")
    if config is not None and config.sandbox_mode == "danger-full-access":
        return Check(OK, "sandbox", "Landlock unavailable (not needed: sandbox_mode = danger-full-access)")
    return Check(FAIL, "sandbox", "Landlock is unavailable: sandboxed commands will be refused",
                 "use a Linux >= 5.13 kernel with Landlock enabled, or sandbox_mode = \"danger-full-access\"")


def check_codex(env: Mapping[str, str]) -> Check:
    found = [codex_binary(Path(p)) for p in (env.get("PYCODEX_CODEX_ROOT") or os.getcwd(),)]
    for binary in found:
        if binary.is_file() and os.access(binary, os.X_OK):
            return Check(OK, "codex", f"{binary}")
    return Check(WARN, "codex", f"no Codex binary at {found[0]} (only `pycodex compat` needs it)",
                 "npm install @openai/codex@0.169.0 in the checkout (or set PYCODEX_CODEX_ROOT)")


def check_remote(env: Mapping[str, str]) -> Check:
    registry, exec_url = env.get(RELAY_VAR, "").strip(), env.get(EXEC_SERVER_VAR, "").strip()
    if registry:
        try:
            with httpx.Client(timeout=TIMEOUT_S, trust_env=False) as http:
                status = http.get(registry).status_code
        except httpx.HTTPError as exc:
            return Check(FAIL, "remote", f"relay {registry} unreachable: {type(exc).__name__}",
                         f"start `pycodex relay` or fix ${RELAY_VAR}")
        return Check(OK, "remote", f"relay {registry} reachable (HTTP {status})")
    if exec_url and exec_url != "none":
        return _check_exec_server(exec_url)
    return Check(SKIP, "remote", "no exec-server or relay configured (commands run locally)")


def _check_exec_server(url: str) -> Check:
    import asyncio

    from websockets.asyncio.client import connect

    async def probe() -> None:
        async with asyncio.timeout(TIMEOUT_S), connect(url, open_timeout=TIMEOUT_S):
            pass

    try:
        asyncio.run(probe())
    except Exception as exc:  # OSError, TimeoutError, and websockets' own InvalidURI / InvalidHandshake
        return Check(FAIL, "remote", f"exec-server {url} unreachable: {type(exc).__name__}",
                     f"start `pycodex exec-server --listen {url}` or fix ${EXEC_SERVER_VAR}")
    return Check(OK, "remote", f"exec-server {url} accepts connections")


def run_checks(home: Path, overrides: Sequence[str], env: Mapping[str, str]) -> list[Check]:
    config_check, config = check_config(home, overrides, env)
    return [config_check, check_provider(config, env), check_sandbox(config), check_codex(env), check_remote(env)]


def run_doctor(overrides: Sequence[str]) -> int:
    checks = run_checks(resolve_codex_home(), overrides, os.environ)
    for check in checks:
        print(check.line())
    failed = sum(check.status == FAIL for check in checks)
    print(f"{failed} check(s) failed" if failed else "all checks passed", file=sys.stderr)
    return 1 if failed else 0
