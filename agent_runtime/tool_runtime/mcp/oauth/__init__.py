"""OAuth 2.1 authorization for MCP servers (MCP authorization, revisions 2025-06-18 and 2025-11-25).

::

    auth = oauth_auth(url, store=keyring_token_store(url), prompt=open_in_browser)
    session = McpSession(name, url, auth=auth)

``oauth_auth`` returns an ``httpx.Auth`` that answers a server's 401 with discovery, registration,
the authorization code flow with PKCE and the token exchange, refreshes tokens, and steps scopes up
on a 403 ``insufficient_scope``; ``bearer_auth`` sends a static token. What cannot be fixed raises
``McpAuthorizationError``. Tokens live in the OS keychain (``keyring_token_store``) or in memory.
"""

from __future__ import annotations

import httpx

from agent_runtime.tool_runtime.mcp.oauth.bearer import BearerAuth
from agent_runtime.tool_runtime.mcp.oauth.browser import AuthorizationPrompt, open_in_browser
from agent_runtime.tool_runtime.mcp.oauth.flow import MAX_STEP_UP_ATTEMPTS, OAuthAuth
from agent_runtime.tool_runtime.mcp.oauth.models import ClientInfo, OAuthToken
from agent_runtime.tool_runtime.mcp.oauth.storage import (
    CLIENT_KEYRING_SERVICE,
    TOKENS_KEYRING_SERVICE,
    KeyringTokenStore,
    MemoryTokenStore,
    TokenStore,
    keyring_token_store,
    memory_token_store,
)

__all__ = [
    "CLIENT_KEYRING_SERVICE",
    "MAX_STEP_UP_ATTEMPTS",
    "TOKENS_KEYRING_SERVICE",
    "AuthorizationPrompt",
    "BearerAuth",
    "ClientInfo",
    "KeyringTokenStore",
    "MemoryTokenStore",
    "OAuthAuth",
    "OAuthToken",
    "TokenStore",
    "bearer_auth",
    "keyring_token_store",
    "memory_token_store",
    "oauth_auth",
    "open_in_browser",
]


def oauth_auth(
    server_url: str,
    *,
    store: TokenStore,
    prompt: AuthorizationPrompt | None,
    client_id: str | None = None,
    client_secret: str | None = None,
    scopes: list[str] | None = None,
    headless: bool = False,
    allow_insecure_loopback: bool = False,
    timeout_s: float = 300.0,
) -> httpx.Auth:
    """OAuth 2.1 authorization for the MCP server at ``server_url``.

    ``prompt`` is given the authorization URL to show (the desktop opens the system browser) while a
    loopback listener waits up to ``timeout_s`` for the redirect. With ``headless=True`` (the probe)
    nobody is asked: the authorization URL's redirects are followed until the one back to the
    loopback redirect URI, which works with authorization servers that approve by themselves.
    ``client_id``/``client_secret`` are a pre-registered client (else dynamic registration);
    ``scopes`` are requested at the first authorization instead of ``scopes_supported``, together with
    any the server's challenge names. ``allow_insecure_loopback``
    admits plain-HTTP authorization servers on loopback addresses, as for the MCP server itself.
    """
    return OAuthAuth(
        server_url,
        store=store,
        prompt=prompt,
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes,
        headless=headless,
        allow_insecure_loopback=allow_insecure_loopback,
        timeout_s=timeout_s,
    )


def bearer_auth(token: str) -> httpx.Auth:
    """A static bearer token from the configuration."""
    return BearerAuth(token)
