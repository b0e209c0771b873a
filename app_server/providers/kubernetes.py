"""Boxes as Kubernetes pods, through the official ``kubernetes`` client (an optional extra: ``kubernetes``).

Each box is one pod (``restartPolicy: Never``) running ``python -m pycodex exec-server --remote`` from an
image that has pycodex installed (``image`` in the table; deploy/kubernetes/ shows one), with its
registration token in a Secret of its own, deleted with the pod. The pods reach the app-server through a
relay they can dial (``relay_url``), as docs/kubernetes.md describes. The client is synchronous; every call
runs in a worker thread. A pod's end is noticed by polling its phase.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from typing import Any

from app_server.providers.base import (
    LABEL_BOX,
    LABEL_ENVIRONMENT,
    LABEL_OWNER,
    LABEL_THREAD,
    Box,
    BoxInfo,
    BoxLaunch,
    BoxProvider,
    BoxRequest,
    EngineUnavailable,
    ProviderError,
)

__all__ = ["KUBERNETES_MISSING", "KubernetesProvider", "pod_manifest"]

#: What a thread start says where the client is missing: the extra that brings it.
KUBERNETES_MISSING = ("the kubernetes client is not installed: install the pycodex[kubernetes] extra "
                      "(pip install 'pycodex[kubernetes]')")

logger = logging.getLogger(__name__)

POLL_S = 2.0
_NAME_PREFIX = "pycodex-"
#: The sidecar that makes the relay's Service look local (deploy/kubernetes/README: why loopback).
FORWARD_IMAGE = "docker.io/alpine/socat:1.8.0.0"


def _label_value(value: str) -> str:
    """A label value Kubernetes accepts (no ``:``): the owner ``host:pid:nonce`` becomes ``host_pid_nonce``."""
    return value.replace(":", "_")[:63]


def _owner_from_label(value: str) -> str:
    parts = value.rsplit("_", 2)
    return ":".join(parts) if len(parts) == 3 else value


def _forwarder(forwards: tuple[str, ...]) -> dict[str, Any]:
    """A sidecar listening on 127.0.0.1:LOCAL for each ``LOCAL=HOST:PORT``, forwarding to HOST:PORT."""
    script = " & ".join(
        f"socat TCP-LISTEN:{local},bind=127.0.0.1,fork,reuseaddr TCP:{target}"
        for local, _, target in (spec.partition("=") for spec in forwards)
    )
    return {"name": "relay-forward", "image": FORWARD_IMAGE, "command": ["/bin/sh", "-c", f"{script} & wait"],
            "resources": {"limits": {"cpu": "100m", "memory": "32Mi"}},
            "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 65534}}


def pod_manifest(request: BoxRequest, launch: BoxLaunch, image: str, forwards: tuple[str, ...] = ()) -> dict[str, Any]:
    """The pod of one box (a plain dict, the client's and ``kubectl apply``'s shape); ``forwards``
    (``LOCAL=HOST:PORT``) adds the relay-forward sidecar."""
    name = _NAME_PREFIX + launch.environment_id
    resources: dict[str, dict[str, str]] = {}
    if request.cpus is not None:
        resources.setdefault("limits", {})["cpu"] = str(request.cpus)
    if request.memory is not None:
        resources.setdefault("limits", {})["memory"] = request.memory.upper().rstrip("B") + "i"
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in request.env]
    env.append({"name": "CODEX_API_KEY", "valueFrom": {"secretKeyRef": {"name": name, "key": "token"}}})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {
            LABEL_OWNER: _label_value(launch.owner), LABEL_BOX: launch.environment_id,
            LABEL_ENVIRONMENT: _label_value(launch.environment_name), LABEL_THREAD: launch.thread_id}},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "hostname": launch.environment_id,
            "containers": [{
                "name": "exec-server",
                "image": image,
                "command": ["python", "-m", "pycodex", "exec-server", "--remote", launch.registry_url,
                            "--environment-id", launch.environment_id],
                "env": env,
                "resources": resources,
                "securityContext": {"allowPrivilegeEscalation": False},
            }, *([_forwarder(forwards)] if forwards else [])],
        },
    }  # fmt: skip


class KubernetesProvider(BoxProvider):
    """Starts, watches, lists and deletes pycodex's pods in one namespace."""

    engine = "kubernetes"

    def __init__(self, *, namespace: str = "default", image: str | None = None,
                 relay_forward: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.namespace = namespace
        self.image = image
        self.relay_forward = relay_forward
        self.poll_s = POLL_S  # how often a pod's phase is read
        self._api: Any = None

    def _core(self) -> Any:
        if self._api is not None:
            return self._api
        try:
            client = importlib.import_module("kubernetes.client")
            config = importlib.import_module("kubernetes.config")
        except ImportError:
            raise EngineUnavailable(KUBERNETES_MISSING) from None
        try:
            config.load_kube_config()
        except Exception:
            try:
                config.load_incluster_config()
            except Exception as exc:
                raise EngineUnavailable(f"no Kubernetes cluster configured (KUBECONFIG, in-cluster): {exc}") from None
        self._api = client.CoreV1Api()
        return self._api

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        api = await asyncio.to_thread(self._core)
        return await asyncio.to_thread(getattr(api, name), *args, **kwargs)

    async def check(self) -> None:
        """Raise ``EngineUnavailable`` unless the cluster answers a pod list in the namespace."""
        try:
            await asyncio.wait_for(self._call("list_namespaced_pod", self.namespace, limit=1), 15)
        except EngineUnavailable:
            raise
        except Exception as exc:
            raise EngineUnavailable(f"the Kubernetes cluster is not reachable: {exc}") from None

    async def start(self, request: BoxRequest, launch: BoxLaunch) -> Box:
        """Create the box's Secret and pod, and watch the pod's phase."""
        image = request.image or self.image
        if image is None:
            raise ProviderError("the kubernetes provider needs an image with pycodex installed (image = ...)")
        name = _NAME_PREFIX + launch.environment_id
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "labels": {
            LABEL_OWNER: _label_value(launch.owner), LABEL_BOX: launch.environment_id}},
            "stringData": {"token": launch.token}}  # fmt: skip
        try:
            await self._call("create_namespaced_secret", self.namespace, secret)
            await self._call("create_namespaced_pod", self.namespace, pod_manifest(request, launch, image, self.relay_forward))
        except EngineUnavailable:
            raise
        except Exception as exc:
            with contextlib.suppress(Exception):
                await self._call("delete_namespaced_secret", name, self.namespace)
            raise ProviderError(f"kubernetes: could not create pod {name}: {exc}") from None
        box = Box(launch.environment_id, launch, handle=name)
        self._watch_in_background(self._watch(box, name), f"pod-watch-{name}")
        return box

    async def _watch(self, box: Box, name: str) -> None:
        while not box.exited.is_set():
            try:
                pod = await self._call("read_namespaced_pod", name, self.namespace)
                phase = pod.status.phase
            except Exception as exc:
                box.why, phase = f"pod {name} is gone: {exc}", "Gone"
            if phase in ("Succeeded", "Failed", "Gone"):
                box.why = box.why or f"pod {name} ended ({phase})"
                box.exited.set()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(box.exited.wait(), self.poll_s)

    async def stop(self, box: Box) -> None:
        """Delete the box's pod and Secret at once."""
        await self.remove(_NAME_PREFIX + box.box_id)
        box.exited.set()

    async def list_boxes(self) -> list[BoxInfo]:
        """Every pod in the namespace carrying the owner label."""
        pods = await self._call("list_namespaced_pod", self.namespace, label_selector=LABEL_OWNER)
        infos = []
        for pod in pods.items:
            labels = dict(pod.metadata.labels or {})
            labels[LABEL_OWNER] = _owner_from_label(labels.get(LABEL_OWNER, ""))
            infos.append(BoxInfo(pod.metadata.name, labels))
        return infos

    async def remove(self, name: str) -> None:
        """Delete pod ``name`` and its Secret (gone already is fine)."""
        for method in ("delete_namespaced_pod", "delete_namespaced_secret"):
            try:
                await self._call(method, name, self.namespace, grace_period_seconds=0)
            except Exception as exc:
                if getattr(exc, "status", None) != 404:
                    logger.warning("kubernetes: %s %s failed: %s", method, name, exc)
