"""The Kubernetes side: deploy/kubernetes/ manifests, the provider's pod, and (where a cluster answers) a real pod.

The manifests and the pod the provider builds are checked everywhere; the cluster test runs only where
KUBECONFIG names a reachable cluster and the ``kubernetes`` client is installed, and skips saying so elsewhere.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import yaml

from app_server.providers.base import LABEL_BOX, LABEL_OWNER, BoxLaunch, BoxRequest
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
