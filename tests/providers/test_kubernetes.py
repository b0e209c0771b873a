"""The Kubernetes side: deploy/kubernetes/ manifests, the provider's pod, and (where a cluster answers) a real pod.

The manifests and the pod the provider builds are checked everywhere; the cluster test runs only where
KUBECONFIG names a reachable cluster and the ``kubernetes`` client is installed, and skips saying so elsewhere.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import tomllib
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from app_server.providers.base import LABEL_BOX, LABEL_OWNER, BoxLaunch, BoxRequest, EngineUnavailable
from app_server.providers.kubernetes import KubernetesProvider, pod_manifest
from app_server.providers.pool import owner_label
from tests.support.paths import REPO_ROOT
from tests.support.tools import require_kubernetes

DEPLOY = REPO_ROOT / "deploy" / "kubernetes"
FORWARDS = ("8080=pycodex-relay:8080", "8081=pycodex-relay:8081")


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def test_every_manifest_parses_into_the_kinds_docs_kubernetes_md_names() -> None:
    kinds = {name.name: [d["kind"] for d in documents(name.name)] for name in sorted(DEPLOY.glob("*.yaml"))}
    assert kinds == {
        "exec-server-pod.yaml": ["Secret", "Pod"],
        "namespace-rbac.yaml": ["Namespace", "ServiceAccount", "Role", "RoleBinding"],
        "relay.yaml": ["Secret", "Deployment", "Service"],
        "sandbox-claim.yaml": ["SandboxTemplate", "SandboxWarmPool", "SandboxClaim"],
    }
    doc = (REPO_ROOT / "docs" / "kubernetes.md").read_text()
    assert all(name in doc for name in kinds)


def test_the_provider_builds_the_pod_of_the_reference_manifest() -> None:
    [_, reference] = documents("exec-server-pod.yaml")
    launch = BoxLaunch("http://127.0.0.1:8080", "box-0123456789ab", "t", "box", "host:1:ab")
    built = pod_manifest(BoxRequest(cpus=2, memory="2g"), launch, "localhost/pycodex:latest", FORWARDS)
    assert built["metadata"]["name"] == reference["metadata"]["name"]
    assert set(built["metadata"]["labels"]) == set(reference["metadata"]["labels"])
    assert built["metadata"]["labels"][LABEL_OWNER] == "host_1_ab"  # no `:` in a label value
    assert built["spec"]["restartPolicy"] == reference["spec"]["restartPolicy"] == "Never"
    ours, theirs = built["spec"]["containers"], reference["spec"]["containers"]
    assert [c["name"] for c in ours] == [c["name"] for c in theirs]
    assert ours[0]["command"] == theirs[0]["command"]
    assert ours[0]["env"] == theirs[0]["env"]
    assert ours[0]["resources"] == theirs[0]["resources"]
    assert ours[1]["command"] == theirs[1]["command"]


async def test_a_reachable_cluster_runs_lists_and_removes_a_box_pod() -> None:
    require_kubernetes()
    provider = KubernetesProvider(namespace="default", image="localhost/pycodex:latest")
    await provider.check()
    owner = owner_label()
    launch = BoxLaunch("http://127.0.0.1:8080", f"box-{secrets.token_hex(6)}", "token", "box", owner)
    box = await provider.start(BoxRequest(), launch)
    try:
        listed = [b for b in await provider.list_boxes() if b.labels.get(LABEL_OWNER) == owner]
        assert [b.labels[LABEL_BOX] for b in listed] == [launch.environment_id]
    finally:
        await provider.stop(box)
    for _ in range(60):  # deletion is asynchronous in the API server; bounded
        if not [b for b in await provider.list_boxes() if b.labels.get(LABEL_OWNER) == owner]:
            break
        await asyncio.sleep(1)
    else:
        raise AssertionError("the box pod was not deleted")


class FakeCoreApi:
    """The few CoreV1Api calls the provider makes, on an in-memory namespace (no cluster)."""

    def __init__(self) -> None:
        self.pods: dict[str, dict[str, Any]] = {}
        self.secrets: dict[str, dict[str, Any]] = {}
        self.phase = "Running"

    def create_namespaced_secret(self, namespace: str, body: dict[str, Any]) -> None:
        self.secrets[body["metadata"]["name"]] = body

    def create_namespaced_pod(self, namespace: str, body: dict[str, Any]) -> None:
        self.pods[body["metadata"]["name"]] = body

    def read_namespaced_pod(self, name: str, namespace: str) -> Any:
        if name not in self.pods:
            raise NotFound()
        return SimpleNamespace(status=SimpleNamespace(phase=self.phase))

    def list_namespaced_pod(self, namespace: str, label_selector: str = "", limit: int = 0) -> Any:
        items = [SimpleNamespace(metadata=SimpleNamespace(name=n, labels=p["metadata"]["labels"]))
                 for n, p in self.pods.items() if label_selector in p["metadata"]["labels"]]  # fmt: skip
        return SimpleNamespace(items=items)

    def delete_namespaced_pod(self, name: str, namespace: str, grace_period_seconds: int = 30) -> None:
        if self.pods.pop(name, None) is None:
            raise NotFound()

    def delete_namespaced_secret(self, name: str, namespace: str, grace_period_seconds: int = 30) -> None:
        if self.secrets.pop(name, None) is None:
            raise NotFound()


class NotFound(Exception):
    status = 404


async def test_the_provider_creates_watches_lists_and_deletes_a_box_through_the_client_api() -> None:
    api = FakeCoreApi()
    provider = KubernetesProvider(namespace="pycodex", image="localhost/pycodex:latest", relay_forward=FORWARDS)
    provider._api = api  # the client stands in for `kubernetes.client.CoreV1Api()`
    provider.poll_s = 0.05
    await provider.check()
    launch = BoxLaunch("http://127.0.0.1:8080", "box-aaaaaaaaaaaa", "s3cr3t", "cluster", "host:42:ab", "thread-1")
    box = await provider.start(BoxRequest(), launch)
    assert api.secrets["pycodex-box-aaaaaaaaaaaa"]["stringData"] == {"token": "s3cr3t"}  # the token: only here
    assert "s3cr3t" not in repr(api.pods)
    [listed] = await provider.list_boxes()
    assert listed.labels[LABEL_OWNER] == "host:42:ab" and listed.labels[LABEL_BOX] == launch.environment_id
    api.phase = "Failed"  # the pod ended (OOM, evicted): the watcher notices within its poll
    await asyncio.wait_for(box.exited.wait(), 10)
    assert box.why == "pod pycodex-box-aaaaaaaaaaaa ended (Failed)"
    await provider.stop(box)
    await provider.remove("pycodex-box-aaaaaaaaaaaa")  # gone already: no error
    assert api.pods == {} and api.secrets == {}


async def test_without_the_client_the_engine_check_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes `import kubernetes` raise ImportError, installed or not.
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    monkeypatch.setitem(sys.modules, "kubernetes.client", None)
    with pytest.raises(EngineUnavailable) as raised:
        await KubernetesProvider(image="localhost/pycodex:latest").check()
    assert str(raised.value) == (
        "the kubernetes client is not installed: install the pycodex[kubernetes] extra "
        "(pip install 'pycodex[kubernetes]')"
    )
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    [requirement] = pyproject["project"]["optional-dependencies"]["kubernetes"]
    assert requirement.startswith("kubernetes>=")
