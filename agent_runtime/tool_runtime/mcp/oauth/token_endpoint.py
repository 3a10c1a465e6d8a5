"""Requests to the token endpoint: the authorization code for tokens (RFC 6749 §4.1.3 with the PKCE
verifier of RFC 7636 §4.5), and a refresh token for new ones (RFC 6749 §6). Both carry the RFC 8707
``resource`` and authenticate the client the way it was registered (RFC 6749 §2.3.1)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from urllib.parse import quote

import httpx

from agent_runtime.tool_runtime.mcp.oauth.discovery import AuthorizationServer
from agent_runtime.tool_runtime.mcp.oauth.failures import TokenRefused
from agent_runtime.tool_runtime.mcp.oauth.fetch import JsonAnswer, oauth_error_text, send_for_json
from agent_runtime.tool_runtime.mcp.oauth.models import ClientInfo, OAuthToken, is_b64token

__all__ = ["TokenRefused", "exchange_code", "refresh_tokens"]


async def exchange_code(
    client: httpx.AsyncClient,
    server: AuthorizationServer,
    info: ClientInfo,
    *,
    code: str,
    verifier: str,
    redirect_uri: str,
    resource: str,
    requested_scope: str | None,
    clock: Callable[[], float],
) -> OAuthToken:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
        "resource": resource,
    }
    answer = await _post(client, server, info, form)
    return _token_from(answer, server, requested_scope=requested_scope, previous=None, clock=clock)


async def refresh_tokens(
    client: httpx.AsyncClient,
    server: AuthorizationServer,
    info: ClientInfo,
    token: OAuthToken,
    *,
    resource: str,
    clock: Callable[[], float],
) -> OAuthToken:
    if token.refresh_token is None:
        raise TokenRefused("there is no refresh token.")
    form = {"grant_type": "refresh_token", "refresh_token": token.refresh_token, "resource": resource}
    answer = await _post(client, server, info, form)
    return _token_from(answer, server, requested_scope=token.scope, previous=token, clock=clock)


async def _post(
    client: httpx.AsyncClient, server: AuthorizationServer, info: ClientInfo, form: dict[str, str]
) -> JsonAnswer:
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    method = info.token_endpoint_auth_method
    if method == "client_secret_basic" and info.client_secret is not None:
        # RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded.
        pair = f"{quote(info.client_id, safe='')}:{quote(info.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    elif method == "client_secret_post" and info.client_secret is not None:
        form = {**form, "client_id": info.client_id, "client_secret": info.client_secret}
    else:
        # A public client identifies itself in the form (RFC 6749 §3.2.1).
        form = {**form, "client_id": info.client_id}
    request = client.build_request("POST", server.token_endpoint, data=form, headers=headers)
    return await send_for_json(client, request, what="token endpoint")


def _token_from(
    answer: JsonAnswer,
    server: AuthorizationServer,
    *,
    requested_scope: str | None,
    previous: OAuthToken | None,
    clock: Callable[[], float],
) -> OAuthToken:
    body = answer.body
    if answer.status != 200 or body is None:
        raise TokenRefused(
            f"the authorization server {server.issuer} refused the token request "
            f"({oauth_error_text(answer)})."
        )
    access, token_type = body.get("access_token"), body.get("token_type")
    if isinstance(access, str) and access and not is_b64token(access):
        # An HTTP library refusing the header would quote the token in its error message.
        raise TokenRefused(
            f"the authorization server {server.issuer} issued an access token with characters an "
            "Authorization: Bearer header cannot carry (RFC 6750 §2.1)."
        )
    if not isinstance(access, str) or not access:
        raise TokenRefused(
            f"the authorization server {server.issuer} answered the token request without an access token."
        )
    # MCP sends the token in an Authorization: Bearer header (OAuth 2.1 §5.1.1); the type is
    # case-insensitive (RFC 6749 §5.1).
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise TokenRefused(
            f"the authorization server {server.issuer} issued a token of type {str(token_type)[:40]!r}; "
            "MCP needs a Bearer token."
        )
    expires_in = body.get("expires_in")
    lifetime = (
        float(expires_in)
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool)
        else None
    )
    refresh, scope = body.get("refresh_token"), body.get("scope")
    if not isinstance(refresh, str) or not refresh:
        # RFC 6749 §6: a refresh response may keep the old refresh token.
        refresh = previous.refresh_token if previous is not None else None
    if not isinstance(scope, str):
        # RFC 6749 §5.1: an omitted scope means the scope requested.
        scope = requested_scope
    normalised_scope = " ".join(scope.split()) if scope is not None else ""
    return OAuthToken(
        access_token=access,
        token_type="Bearer",
        refresh_token=refresh,
        scope=normalised_scope or None,
        expires_at=OAuthToken.expiry(clock(), lifetime),
    )
