"""Which box a thread's sandbox policy calls for, without an engine: its network, its workspace mount, and
the container options that carry them (the real-Podman side is tests/providers/test_box_network.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app_server.environments import EnvironmentChoice, EnvironmentHub, ThreadEnvironment
from app_server.protocol.turns import TurnStartParams
from app_server.providers.base import BOX_RELAY_DIR, Box, BoxLaunch, BoxRequest, Mount, ProviderError
from app_server.providers.podman import PodmanProvider
from app_server.providers.pool import BoxPool, Lease, PoolSettings
from app_server.threads.contracts import ThreadSettings
from app_server.threads.overrides import apply_turn_overrides
from tests.providers.test_reaper import FakeConnector, FakeEngine, FakeEnvironment

WORK = Path("/srv/work")


class Thread:
    """Stands for the thread environment a lease follows (by weak reference)."""


def lease(request: BoxRequest) -> Lease:
    fake: Any = SimpleNamespace()
    return Lease(Box("box-1", BoxLaunch("unix:///x", "box-1", "t", "box", "o")), fake, fake, request)


@pytest.mark.parametrize(("configured", "allowed", "network"), [
    ("host", False, "none"), ("host", True, "host"), ("bridge", True, "bridge"), ("none", True, "none"),
])  # fmt: skip
def test_the_network_follows_the_policy_and_the_configured_network(configured: str, allowed: bool,
                                                                   network: str) -> None:
    pool = BoxPool("box", FakeEngine([]), BoxRequest(network=configured), PoolSettings())
    assert pool.network_for(allowed) == network


def test_a_box_fits_until_the_policy_or_workspace_changes() -> None:
    pool = BoxPool("box", FakeEngine([]), BoxRequest(mounts=(Mount(Path("/data"), Path("/data"), False),)),
                   PoolSettings())  # fmt: skip
    restricted = lease(BoxRequest(workspace=WORK, network="none"))
    assert pool.fits(restricted, WORK / "sub")
    assert not pool.fits(restricted, WORK, network=True)  # a turn turned network access on
    assert not pool.fits(restricted, WORK, read_only=True)  # ... or made the sandbox read-only
    assert not pool.fits(restricted, Path("/elsewhere"))  # ... or moved the cwd out of the mount
    assert pool.fits(restricted, Path("/data/x"))  # a read-write mount of the pool covers it
    networked = lease(BoxRequest(workspace=WORK, network="host"))
    assert pool.fits(networked, WORK, network=True) and not pool.fits(networked, WORK)


def test_a_box_mounts_the_relay_socket_directory_read_only_and_gets_the_requested_network(tmp_path: Path) -> None:
    launch = BoxLaunch("unix:///run/pycodex-relay/relay.sock", "box-1", "t", "box", "o", relay_dir=tmp_path)
    args = PodmanProvider()._run_args(BoxRequest(network="none"), launch, "box-1", "img")
    assert args[args.index("--network") + 1] == "none"
    assert f"{tmp_path}:{BOX_RELAY_DIR}:ro" in args
    assert "--uts" not in args and args[args.index("--hostname") + 1] == "box-1"


async def test_a_box_without_network_and_a_relay_elsewhere_is_refused_saying_why() -> None:
    launch = BoxLaunch("https://relay.example", "box-1", "t", "box", "o")  # no socket directory to mount
    with pytest.raises(ProviderError) as raised:
        await PodmanProvider().start(BoxRequest(network="none"), launch)
    assert str(raised.value).startswith("a box without a network cannot reach the relay at https://relay.example")


async def test_warm_boxes_follow_the_network_of_the_last_thread_that_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = FakeEngine([])
    pool = BoxPool("box", engine, BoxRequest(network="host"), PoolSettings(size=1, reap_interval_s=3600))
    made: list[BoxRequest] = []

    async def new_lease(request: BoxRequest, thread_id: str) -> Lease:  # no engine, no relay: the lease only
        made.append(request)
        box_id = f"box-{len(made)}"
        started = Lease(Box(box_id, BoxLaunch("unix:///x", box_id, "t", "box", pool.owner, thread_id)),
                        FakeEnvironment(), FakeConnector(), request)  # type: ignore[arg-type]
        pool._leases[box_id] = started
        return started

    monkeypatch.setattr(pool, "_new_lease", new_lease)
    try:
        pool.start()
        await pool.wait_warm(10)
        assert [r.network for r in made] == ["none"]  # at first: the default sandbox's (no network)
        owner = Thread()
        full = await pool.acquire("t1", owner, None, network=True)  # a thread with network access
        assert full.request.network == "host" and full.box.box_id == "box-2"  # cold: no warm box fitted
        await pool.wait_warm(10)
        assert [r.network for r in made] == ["none", "host", "host"]  # the warm box is one of its kind now
        assert engine.stopped == ["box-1"]  # and the one made for no network went
        again = await pool.acquire("t2", owner, None, network=True)
        assert again.box.box_id == "box-3"  # warm
    finally:
        await pool.close()


@pytest.mark.parametrize(("policy", "mode", "allowed"), [
    ({"type": "workspaceWrite", "networkAccess": True}, "workspace-write", True),
    ({"type": "workspaceWrite"}, "workspace-write", False),
    ({"type": "readOnly", "networkAccess": True}, "read-only", False),  # read-only: never a network
    ({"type": "dangerFullAccess"}, "danger-full-access", True),
])  # fmt: skip
def test_a_turns_sandbox_policy_decides_whether_the_threads_box_has_a_network(
    policy: dict[str, Any], mode: str, allowed: bool
) -> None:
    settings = ThreadSettings(model="m", model_provider="p", cwd=WORK, network_access=not allowed)
    params = TurnStartParams.model_validate({"threadId": "t", "input": [], "sandboxPolicy": policy})
    apply_turn_overrides(settings, params)
    environment = ThreadEnvironment(EnvironmentHub(EnvironmentChoice("none", None), {}), snapshot=None,
                                    settings=settings)  # fmt: skip
    assert (settings.sandbox_mode, environment.network_allowed) == (mode, allowed)
