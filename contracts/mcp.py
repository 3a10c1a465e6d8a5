"""MCP servers: their configuration, their state as the desktop sees it, and tool-name patterns
(seed 003 §9).

Where servers come from
    The policy bundle's ``mcpServers`` and the project's ``.cowork/mcp.json`` (``{"servers": [...]}``,
    :class:`WorkspaceMcpConfig`). Both hold :class:`McpServerConfig` entries. The workspace may add
    servers but never widens the policy: a tool is registered only when the bundle's ``Mcp.Invoke``
    grant lists it in ``allowedToolNames`` (seed 003 §9.4), and a local (stdio) server starts only when
    the bundle says ``allowLocalMcpServers: true``.

The capability
    Every MCP tool maps to ``Mcp.Invoke`` (:attr:`contracts.enums.Capability.MCP_INVOKE`). Its grant's
    ``allowedToolNames`` holds patterns, each ``"server/tool"`` (that tool) or ``"server/*"`` (every
    tool of that server); :func:`tool_pattern_matches` is the one matching rule. An MCP tool is named
    ``"{server}/{tool}"`` inside Cowork; on the LLM wire the name is mapped to the characters each
    dialect allows, reversibly.

Approvals
    A call of an MCP tool needs the user's approval when the ``Mcp.Invoke`` grant says
    ``requiresApproval`` (every MCP tool, with the grant's ``approvalRuleId``), or when an approval rule
    of the bundle lists the tool in its ``toolNames`` (same patterns: that rule's title, description and
    risk level are shown, in every approval mode — like ``approvalCommands`` for commands). Otherwise
    the task's approval mode decides, as for built-in tools; MCP tools are rated medium risk, high when
    the server marks the tool ``destructiveHint``.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import ConfigDict, Field, field_validator, model_validator

from contracts._base import WireModel

__all__ = [
    "MAX_MCP_SERVERS",
    "SERVER_NAME_PATTERN",
    "ElicitationAction",
    "McpAuthConfig",
    "McpAuthType",
    "McpRejectedTool",
    "McpServerConfig",
    "McpServerSource",
    "McpServerState",
    "McpServerStatus",
    "McpTransport",
    "WorkspaceMcpConfig",
    "check_tool_patterns",
    "is_tool_pattern",
    "qualified_tool_name",
    "split_tool_name",
    "tool_pattern_matches",
    "unique_servers",
]

SERVER_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,32}$"
"""A server's name: the namespace of its tools, so it holds no ``/``."""

MAX_MCP_SERVERS = 32
"""Per source (bundle or workspace file); more is a configuration mistake, not a use."""

_SERVER_NAME = re.compile(SERVER_NAME_PATTERN)
_TOOL_PART = re.compile(r"^[^\s\x00-\x1f\x7f]{1,128}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_RESERVED_HEADERS = frozenset(
    {"authorization", "mcp-session-id", "mcp-protocol-version", "content-type", "accept", "host"}
)


class McpTransport(StrEnum):
    HTTP = "http"
    """Streamable HTTP to a URL (seed 003 §9.2)."""
    STDIO = "stdio"
    """A local program speaking MCP on its standard input and output; only when the bundle allows it."""


class McpAuthType(StrEnum):
    NONE = "none"
    BEARER = "bearer"
    """A static token read from the environment variable ``tokenEnv`` (never written in the file)."""
    OAUTH = "oauth"
    """MCP authorization (OAuth 2.1): the user signs in in the browser; tokens live in the OS keychain."""


class McpAuthConfig(WireModel):
    type: McpAuthType = McpAuthType.NONE
    token_env: str | None = None
    """``bearer``: the environment variable holding the token."""
    client_id: str | None = Field(default=None, min_length=1, max_length=512)
    """``oauth``: a client registered in advance (else dynamic client registration is used)."""
    client_secret_env: str | None = None
    """``oauth``: the environment variable holding that client's secret, if it has one."""
    scopes: list[str] | None = Field(default=None, max_length=64)
    """``oauth``: the scopes to ask for (else the server's challenge or metadata decides)."""

    @field_validator("token_env", "client_secret_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            raise ValueError("must be an environment variable name (letters, digits and _)")
        return value

    @model_validator(mode="after")
    def _fits_type(self) -> McpAuthConfig:
        if self.type is McpAuthType.BEARER and self.token_env is None:
            raise ValueError("bearer authorization names the environment variable of its token in tokenEnv")
        if self.type is not McpAuthType.BEARER and self.token_env is not None:
            raise ValueError("tokenEnv is for bearer authorization only")
        oauth_only = (self.client_id, self.client_secret_env, self.scopes)
        if self.type is not McpAuthType.OAUTH and any(value is not None for value in oauth_only):
            raise ValueError("clientId, clientSecretEnv and scopes are for oauth authorization only")
        return self


class McpServerConfig(WireModel):
    """One MCP server, from the policy bundle or the project's ``.cowork/mcp.json``."""

    name: str = Field(pattern=SERVER_NAME_PATTERN)
    transport: McpTransport = McpTransport.HTTP
    url: str | None = Field(default=None, min_length=1, max_length=2048)
    """``http``: the endpoint (``https://``; ``http://`` only to loopback with ``allowInsecureLoopback``)."""
    headers: dict[str, str] = Field(default_factory=dict, max_length=32)
    """``http``: extra request headers (not ``Authorization``: use ``auth``)."""
    auth: McpAuthConfig = Field(default_factory=McpAuthConfig)
    allow_insecure_loopback: bool = False
    """``http``: accept ``http://`` when the host is a loopback address (local development)."""
    command: list[str] | None = Field(default=None, min_length=1, max_length=256)
    """``stdio``: the program and its arguments, checked by the command policy of ``RunCommand``."""
    env: dict[str, str] | None = Field(default=None, max_length=64)
    """``stdio``: variables added to the reduced environment ``RunCommand`` gets."""

    @field_validator("headers")
    @classmethod
    def _header_names(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an HTTP header name")
            if name.lower() in _RESERVED_HEADERS:
                raise ValueError(f"{name} is set by the MCP client itself")
            if any((ord(char) < 0x20 and char != "\t") or ord(char) == 0x7F for char in value):
                raise ValueError(f"the value of {name} holds control characters")
        return headers

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str] | None) -> dict[str, str] | None:
        for name, value in (env or {}).items():
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an environment variable name")
            if "\x00" in value:
                raise ValueError(f"the value of {name} holds a NUL character")
        return env

    @field_validator("command")
    @classmethod
    def _command_words(cls, command: list[str] | None) -> list[str] | None:
        if command is not None and (not command[0] or any("\x00" in word for word in command)):
            raise ValueError("starts with a program name and holds no NUL character")
        return command

    @model_validator(mode="after")
    def _fits_transport(self) -> McpServerConfig:
        if self.transport is McpTransport.HTTP:
            if self.url is None:
                raise ValueError(f"server {self.name}: an http server has a url")
            if self.command is not None or self.env is not None:
                raise ValueError(f"server {self.name}: command and env are for stdio servers only")
            scheme = self.url.split(":", 1)[0].lower()
            if scheme not in ("https", "http"):
                raise ValueError(f"server {self.name}: the url must start with https://")
            if scheme == "http" and not self.allow_insecure_loopback:
                raise ValueError(
                    f"server {self.name}: plain http:// is accepted only for a loopback address"
                    " with allowInsecureLoopback: true"
                )
        else:
            if self.command is None:
                raise ValueError(f"server {self.name}: a stdio server has a command")
            if self.url is not None or self.headers or self.allow_insecure_loopback:
                raise ValueError(f"server {self.name}: url, headers and allowInsecureLoopback are for http")
            if self.auth.type is not McpAuthType.NONE:
                raise ValueError(f"server {self.name}: a stdio server takes no auth (use env)")
        return self


def _unique_names(servers: list[McpServerConfig]) -> list[McpServerConfig]:
    seen: set[str] = set()
    for server in servers:
        if server.name in seen:
            raise ValueError(f"server name {server.name} is used more than once")
        seen.add(server.name)
    return servers


class WorkspaceMcpConfig(WireModel):
    """The project's ``.cowork/mcp.json`` (the runtime reads it entry by entry, to use what it can)."""

    # Built on first use: sessions without MCP servers never validate one.
    model_config = ConfigDict(defer_build=True)

    servers: list[McpServerConfig] = Field(default_factory=list, max_length=MAX_MCP_SERVERS)

    @field_validator("servers")
    @classmethod
    def _unique(cls, servers: list[McpServerConfig]) -> list[McpServerConfig]:
        return _unique_names(servers)


class McpServerSource(StrEnum):
    POLICY = "policy"
    WORKSPACE = "workspace"


class McpServerStatus(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    UNAVAILABLE = "unavailable"
    """Failed to connect, failed repeatedly, or was refused by the policy (``lastError`` says which)."""
    CLOSED = "closed"
    AUTHORIZING = "authorizing"
    """Waiting for the user to sign in (an ``mcp_authorization_required`` event names the URL)."""


class McpRejectedTool(WireModel):
    """A tool the server offered that Cowork did not register, and why."""

    tool_name: str
    reason: str = Field(min_length=1)


class McpServerState(WireModel):
    """One server as the desktop shows it: the ``mcp_server_state_changed`` payload and an entry of
    ``GetMcpServers``."""

    name: str = Field(min_length=1)
    url: str | None = None
    """The endpoint of an http server; for a stdio server, its program."""
    state: McpServerStatus
    tool_count: int = Field(default=0, ge=0)
    """Tools registered (offered by the server and allowlisted by the policy)."""
    last_error: str | None = None
    protocol_version: str | None = None
    transport: McpTransport | None = None
    source: McpServerSource | None = None
    rejected_tools: list[McpRejectedTool] | None = None
    """Tools the server offered and Cowork did not register: a malformed schema, or not allowlisted."""


class ElicitationAction(StrEnum):
    """The user's answer to a server's request for input (MCP elicitation)."""

    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"


def split_tool_name(qualified: str) -> tuple[str, str] | None:
    """``"server/tool"`` → ``("server", "tool")``; ``None`` when it is not an MCP tool's name."""
    server, slash, tool = qualified.partition("/")
    if not slash or not _SERVER_NAME.fullmatch(server) or not _TOOL_PART.fullmatch(tool):
        return None
    return server, tool


def qualified_tool_name(server: str, tool: str) -> str:
    return f"{server}/{tool}"


def is_tool_pattern(pattern: str) -> bool:
    """An ``allowedToolNames``/``toolNames`` entry: ``"server/tool"`` or ``"server/*"``."""
    return split_tool_name(pattern) is not None


def tool_pattern_matches(pattern: str, qualified: str) -> bool:
    """Whether ``pattern`` (``"server/tool"`` or ``"server/*"``) covers the tool ``qualified``."""
    parts, named = split_tool_name(pattern), split_tool_name(qualified)
    if parts is None or named is None:
        return False
    return parts[0] == named[0] and (parts[1] == "*" or parts[1] == named[1])


def check_tool_patterns(patterns: list[str] | None, field: str) -> None:
    """Raises ValueError naming the first entry of ``patterns`` that is not a tool pattern."""
    for pattern in patterns or ():
        if not is_tool_pattern(pattern):
            raise ValueError(f"{field}: {pattern!r} is not 'server/tool' or 'server/*'")


def unique_servers(servers: list[McpServerConfig]) -> list[McpServerConfig]:
    """``servers`` when no name repeats; raises ValueError naming the repeated one."""
    return _unique_names(servers)
