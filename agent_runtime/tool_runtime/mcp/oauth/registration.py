"""Who this client is to an authorization server: a client id and secret from the configuration, or
one obtained by dynamic client registration (RFC 7591) for the loopback redirect URI."""

from __future__ import annotations

import logging

import httpx

from agent_runtime.tool_runtime.mcp.oauth.discovery import AuthorizationServer
from agent_runtime.tool_runtime.mcp.oauth.failures import AuthorizationFailed
from agent_runtime.tool_runtime.mcp.oauth.fetch import oauth_error_text, send_for_json
from agent_runtime.tool_runtime.mcp.oauth.models import ClientInfo

__all__ = ["CLIENT_NAME", "SUPPORTED_AUTH_METHODS", "configured_client", "register_client"]

logger = logging.getLogger(__name__)

CLIENT_NAME = "Cowork"
# The token endpoint authentication methods this client can apply (RFC 7591 §2): the secret in a
# Basic header, the secret in the form, or none (a public client, which PKCE protects).
SUPPORTED_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
# RFC 8414 §2: when token_endpoint_auth_methods_supported is omitted, the default is client_secret_basic.
_DEFAULT_SERVER_METHODS = ("client_secret_basic",)


def _method_for(server: AuthorizationServer, *, has_secret: bool) -> str:
    """The first method in the server's list (its order of preference) that this client can apply."""
    offered = server.token_endpoint_auth_methods_supported or _DEFAULT_SERVER_METHODS
    for method in offered:
        if method in SUPPORTED_AUTH_METHODS and (has_secret or method == "none"):
            return method
    if not has_secret:
        # No secret to present: a public client. The server's list may name only secret methods for
        # confidential clients while still serving public ones with PKCE.
        return "none"
    raise AuthorizationFailed(
        f"the authorization server {server.issuer} accepts none of the client authentication methods "
        f"Cowork supports ({', '.join(SUPPORTED_AUTH_METHODS)}); it offers {', '.join(offered)}."
    )


def configured_client(
    server: AuthorizationServer, client_id: str, client_secret: str | None, redirect_uri: str | None
) -> ClientInfo:
    """A pre-registered client from the server's configuration, authenticating the way the
    authorization server names."""
    return ClientInfo(
        client_id=client_id,
        client_secret=client_secret or None,
        token_endpoint_auth_method=_method_for(server, has_secret=bool(client_secret)),
        redirect_uri=redirect_uri,
        issuer=server.issuer,
        registered=False,
    )


async def register_client(
    client: httpx.AsyncClient, server: AuthorizationServer, redirect_uri: str, scope: str | None
) -> ClientInfo:
    """Register with the server's registration endpoint (RFC 7591 §3) for ``redirect_uri``."""
    if server.registration_endpoint is None:
        raise AuthorizationFailed(
            f"the authorization server {server.issuer} does not offer dynamic client registration; "
            "configure a client id (and secret, if it issued one) for this MCP server."
        )
    metadata: dict[str, object] = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    }
    if server.token_endpoint_auth_methods_supported:
        # Ask for the server's preferred method; with no list, leave the choice to the server and
        # use what it answers (RFC 7591 §3.2.1).
        metadata["token_endpoint_auth_method"] = _method_for(server, has_secret=True)
    if scope:
        # Servers that check requested scopes against the registered ones need them here.
        metadata["scope"] = scope
    request = client.build_request("POST", server.registration_endpoint, json=metadata)
    answer = await send_for_json(client, request, what="client registration endpoint")
    body = answer.body
    if answer.status not in (200, 201) or body is None:
        raise AuthorizationFailed(
            f"the authorization server {server.issuer} refused to register Cowork as a client "
            f"({oauth_error_text(answer)})."
        )
    client_id, secret, method = (
        body.get("client_id"),
        body.get("client_secret"),
        body.get("token_endpoint_auth_method"),
    )
    if not isinstance(client_id, str) or not client_id:
        raise AuthorizationFailed(
            f"the authorization server {server.issuer} registered Cowork without a client id."
        )
    secret = secret if isinstance(secret, str) and secret else None
    if not isinstance(method, str) or not method:
        method = "client_secret_basic" if secret else "none"
    # RFC 7591 §3.2.1: the server may change what was asked for; check it is still usable.
    if method not in SUPPORTED_AUTH_METHODS:
        raise AuthorizationFailed(
            f"the authorization server {server.issuer} registered Cowork for the {method!r} client "
            "authentication method, which Cowork does not support."
        )
    if method != "none" and secret is None:
        raise AuthorizationFailed(
            f"the authorization server {server.issuer} registered Cowork for {method} "
            "but issued no client secret."
        )
    expires = body.get("client_secret_expires_at")
    # RFC 7591 §3.2.1: seconds since the epoch, 0 for a secret that does not expire.
    expires_at = (
        float(expires) if isinstance(expires, int) and not isinstance(expires, bool) and expires > 0 else None
    )
    logger.info("registered with the authorization server %s", server.issuer)
    return ClientInfo(
        client_id=client_id,
        client_secret=secret,
        token_endpoint_auth_method=method,
        redirect_uri=redirect_uri,
        issuer=server.issuer,
        registered=True,
        secret_expires_at=expires_at if secret is not None else None,
    )
