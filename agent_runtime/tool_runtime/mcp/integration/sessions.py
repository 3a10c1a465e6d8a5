"""Building the session for one configured server: its transport and its credentials (seed 003 §9.2
step 2, §9.3 "Unauthorized access", "Man-in-the-middle").

* ``http``: :class:`~agent_runtime.tool_runtime.mcp.session.McpSession` — https only, plain http only
  to loopback and only with ``allowInsecureLoopback`` — with the credentials the configuration names:
  none, a static bearer token read from the environment variable ``tokenEnv``, or OAuth with the tokens
  in the OS keychain and the authorization page handed to ``prompt`` (the desktop opens the browser).
* ``stdio``: a local program, only when the bundle says ``allowLocalMcpServers``, and only when its
  command line passes ``RunCommand``'s command policy (asked of the host); it runs with the environment
  ``RunCommand`` gives commands — the user's, without the runtime's own secrets — plus the entry's
  ``env``, in the first project folder.

What can never work in this session (a refused command, a token variable that is not set) raises
:class:`ServerRefused`; the server is then shown unavailable with the reason, and not tried again.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import httpx

from contracts.mcp import McpAuthType, McpServerConfig, McpTransport
from contracts.mcp_boundary import LocalCommandCheck

if TYPE_CHECKING:
    from agent_runtime.tool_runtime.mcp.elicitation import ElicitationHandler
    from agent_runtime.tool_runtime.mcp.protocol import McpProtocolSession

__all__ = ["ServerRefused", "open_session_for"]


class ServerRefused(Exception):
    """The server cannot be used in this session; the message says why, for the user."""


def open_session_for(
    config: McpServerConfig,
    *,
    environ: Mapping[str, str],
    allow_local_servers: bool,
    check_local_command: LocalCommandCheck,
    workspace_paths: Sequence[str],
    elicitation: ElicitationHandler,
    on_tools_changed: Callable[[], None],
    authorization_prompt: Callable[[str], Awaitable[None]],
    call_timeout_s: float,
) -> McpProtocolSession:
    """A session for ``config``, not yet opened. Raises :class:`ServerRefused` or ``McpInsecureUrl``."""
    if config.transport is McpTransport.STDIO:
        if not allow_local_servers:
            raise ServerRefused(
                "it is a local (stdio) server, and the policy does not allow local MCP servers"
                " (allowLocalMcpServers)"
            )
        assert config.command is not None  # the contract requires it of stdio servers
        cwd = workspace_paths[0] if workspace_paths else None
        refused = check_local_command(config.command, cwd)
        if refused is not None:
            raise ServerRefused(f"its command {config.command[0]!r} may not run: {refused}")
        from agent_runtime.tool_runtime.mcp.stdio import StdioMcpSession
        from agent_runtime.tool_runtime.tools.shell.process import command_environment

        # RunCommand's environment (the runtime's secrets removed) with the run id that marks its processes.
        env = command_environment(environ, f"mcp-{config.name}-{uuid.uuid4().hex[:12]}")
        env.update(config.env or {})
        return StdioMcpSession(
            config.name,
            list(config.command),
            env=env,
            cwd=cwd,
            elicitation=elicitation,
            on_tools_changed=on_tools_changed,
            call_timeout_s=call_timeout_s,
        )
    from agent_runtime.tool_runtime.mcp.session import McpSession

    assert config.url is not None  # the contract requires it of http servers
    return McpSession(
        config.name,
        config.url,
        headers=config.headers,
        auth=_auth(config, environ, authorization_prompt),
        allow_insecure_loopback=config.allow_insecure_loopback,
        elicitation=elicitation,
        on_tools_changed=on_tools_changed,
        call_timeout_s=call_timeout_s,
    )


def _auth(
    config: McpServerConfig, environ: Mapping[str, str], prompt: Callable[[str], Awaitable[None]]
) -> httpx.Auth | None:
    auth = config.auth
    if auth.type is McpAuthType.NONE:
        return None
    from agent_runtime.tool_runtime.mcp import oauth

    if auth.type is McpAuthType.BEARER:
        assert auth.token_env is not None  # the contract requires it
        token = environ.get(auth.token_env, "").strip()
        if not token:
            raise ServerRefused(
                f"its token is read from the environment variable {auth.token_env}, which is not set"
            )
        return oauth.bearer_auth(token)
    assert config.url is not None
    secret = None
    if auth.client_secret_env is not None:
        secret = environ.get(auth.client_secret_env, "").strip() or None
        if secret is None:
            raise ServerRefused(
                f"its client secret is read from the environment variable {auth.client_secret_env},"
                " which is not set"
            )
    return oauth.oauth_auth(
        config.url,
        store=oauth.keyring_token_store(config.url),
        prompt=prompt,
        client_id=auth.client_id,
        client_secret=secret,
        scopes=auth.scopes,
        allow_insecure_loopback=config.allow_insecure_loopback,
    )
