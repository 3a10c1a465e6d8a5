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


# The constructor's own signature, under the name callers use beside ``bearer_auth``.
oauth_auth = OAuthAuth


def bearer_auth(token: str) -> httpx.Auth:
    """A static bearer token from the configuration."""
    return BearerAuth(token)
