"""The initialize handshake: `InitializeParams` (clientInfo + capabilities) and `InitializeResponse`."""

from __future__ import annotations

from typing import ClassVar

from pycodex.json_types import JsonObj

from .base import ParamsModel, WireModel


class ClientInfo(WireModel):
    """Who the client is: name, title and version (`initialize.clientInfo`)."""

    name: str
    title: str | None = None
    version: str


class InitializeCapabilities(WireModel):
    """Client-declared capabilities negotiated during initialize."""

    experimental_api: bool = False
    opt_out_notification_methods: list[str] | None = None
    request_attestation: bool = False
    required_human_approval: bool = False
    extensions: JsonObj | None = None
    explicit_gateway_oauth: bool = False
    mcp_server_openai_form_elicitation: bool = False


class InitializeParams(ParamsModel):
    """Params of `initialize`."""

    METHOD: ClassVar[str] = "initialize"

    client_info: ClientInfo
    capabilities: InitializeCapabilities | None = None

    @property
    def experimental_api(self) -> bool:
        """Whether the client asked for the experimental API (`capabilities.experimentalApi`)."""
        return self.capabilities is not None and self.capabilities.experimental_api

    @property
    def opt_out_notification_methods(self) -> frozenset[str]:
        """The notification methods the client asked not to be sent."""
        methods = self.capabilities.opt_out_notification_methods if self.capabilities else None
        return frozenset(methods or ())


class InitializeResponse(WireModel):
    """No `serverInfo`: SDKs derive the server name/version by splitting `userAgent` at the first `/`."""

    user_agent: str
    codex_home: str
    platform_family: str = "unix"
    platform_os: str = "linux"


class InitializedNotificationParams(WireModel):
    """`initialized` carries no params (or `{}`); kept for symmetry in the notification tables."""
