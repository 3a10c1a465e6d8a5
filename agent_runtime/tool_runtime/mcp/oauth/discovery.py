"""Finding the authorization server of an MCP server after a 401 (MCP authorization, "Authorization
Server Discovery"; RFC 9728, RFC 8414, OpenID Connect Discovery 1.0).

1. Protected-resource metadata: the challenge's ``resource_metadata``, else the well-known URI with
   the endpoint's path, then the root one. Its ``resource`` must name this server, or we stop.
2. The metadata of the first authorization server it lists (RFC 9728 §7.6 leaves the choice to
   the client), RFC 8414 and OpenID forms with their path-aware variants in the specification's order.
3. Without protected-resource metadata (servers of the 2025-03-26 revision), the server origin's
   authorization-server metadata, else ``/authorize``, ``/token`` and ``/register`` at the origin.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx

from agent_runtime.tool_runtime.mcp.oauth.challenge import BearerChallenge
from agent_runtime.tool_runtime.mcp.oauth.failures import AuthorizationFailed
from agent_runtime.tool_runtime.mcp.oauth.fetch import send_for_json
from agent_runtime.tool_runtime.mcp.oauth.urls import (
    authorization_server_metadata_urls,
    canonical_resource,
    check_secure,
    for_display,
    origin,
    protected_resource_metadata_urls,
    resource_belongs_to,
)

__all__ = ["AuthorizationServer", "Discovery", "ResourceMetadata", "discover"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResourceMetadata:
    url: str
    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None


@dataclass(frozen=True)
class AuthorizationServer:
    """An authorization server's endpoints and the capabilities the flow consults.

    ``metadata_url`` is None for the default endpoints of the 2025-03-26 revision, used when the
    server publishes no metadata at all.
    """

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None
    iss_parameter_supported: bool
    metadata_url: str | None


@dataclass(frozen=True)
class Discovery:
    """What authorization needs to know about one MCP server; ``resource`` is the RFC 8707
    ``resource`` parameter sent in the authorization and token requests."""

    resource: str
    resource_metadata: ResourceMetadata | None
    server: AuthorizationServer


async def discover(
    client: httpx.AsyncClient, server_url: str, challenge: BearerChallenge, *, allow_insecure_loopback: bool
) -> Discovery:
    metadata = await _protected_resource_metadata(
        client, server_url, challenge, allow_insecure_loopback=allow_insecure_loopback
    )
    if metadata is not None and metadata.authorization_servers:
        issuer = check_secure(
            metadata.authorization_servers[0],
            allow_insecure_loopback=allow_insecure_loopback,
            what="authorization server",
        )
        server = await _authorization_server(client, issuer, allow_insecure_loopback=allow_insecure_loopback)
        if server is None:
            tried = ", ".join(authorization_server_metadata_urls(issuer))
            raise AuthorizationFailed(
                f"the authorization server {issuer} of {for_display(server_url)} publishes no metadata "
                f"(tried {tried}), so Cowork cannot find where to sign in."
            )
    else:
        # No protected-resource metadata, or metadata naming no authorization server: the MCP server's
        # origin is the authorization server, as in the 2025-03-26 revision.
        base = origin(server_url)
        server = await _authorization_server(client, base, allow_insecure_loopback=allow_insecure_loopback)
        if server is None:
            logger.info("no authorization server metadata at %s: using its default endpoints", base)
            server = AuthorizationServer(
                issuer=base,
                authorization_endpoint=f"{base}/authorize",
                token_endpoint=f"{base}/token",
                registration_endpoint=f"{base}/register",
                token_endpoint_auth_methods_supported=None,
                iss_parameter_supported=False,
                metadata_url=None,
            )
    # The token is requested for the resource exactly as the server names itself (it may be a parent
    # of the endpoint when its metadata lives at the root), else for the endpoint's canonical URI.
    resource = metadata.resource.strip() if metadata is not None else canonical_resource(server_url)
    return Discovery(resource=resource, resource_metadata=metadata, server=server)


async def _protected_resource_metadata(
    client: httpx.AsyncClient, server_url: str, challenge: BearerChallenge, *, allow_insecure_loopback: bool
) -> ResourceMetadata | None:
    for url in protected_resource_metadata_urls(server_url, challenge.resource_metadata):
        check_secure(url, allow_insecure_loopback=allow_insecure_loopback, what="protected-resource metadata")
        answer = await send_for_json(
            client, client.build_request("GET", url), what="protected-resource metadata"
        )
        if answer.status == 200 and answer.body is not None:
            metadata = _parse_resource_metadata(url, answer.body)
            if metadata is None:
                logger.info("ignoring malformed protected-resource metadata at %s", url)
                continue
            if not resource_belongs_to(metadata.resource, server_url):
                raise AuthorizationFailed(
                    f"the protected-resource metadata at {url} is for {_short(metadata.resource)}, not for "
                    f"{for_display(server_url)}; Cowork will not send this server's credentials elsewhere."
                )
            return metadata
        if answer.status >= 500 or answer.status == 429:
            # A server error says nothing about whether metadata exists: falling back to the legacy
            # endpoints could authorize against the wrong server.
            raise AuthorizationFailed(
                f"the protected-resource metadata at {url} could not be read (HTTP {answer.status}); "
                "try again later."
            )
    return None


def _parse_resource_metadata(url: str, body: dict[str, Any]) -> ResourceMetadata | None:
    resource = body.get("resource")
    if not isinstance(resource, str) or not resource:
        return None
    servers = _strings(body.get("authorization_servers")) or ()
    return ResourceMetadata(
        url=url,
        resource=resource,
        authorization_servers=servers,
        scopes_supported=_strings(body.get("scopes_supported")),
    )


async def _authorization_server(
    client: httpx.AsyncClient, issuer: str, *, allow_insecure_loopback: bool
) -> AuthorizationServer | None:
    for url in authorization_server_metadata_urls(issuer):
        check_secure(
            url, allow_insecure_loopback=allow_insecure_loopback, what="authorization server metadata"
        )
        answer = await send_for_json(
            client, client.build_request("GET", url), what="authorization server metadata"
        )
        if answer.status == 200 and answer.body is not None:
            return _parse_server(url, issuer, answer.body, allow_insecure_loopback=allow_insecure_loopback)
        if answer.status >= 500 or answer.status == 429:
            raise AuthorizationFailed(
                f"the authorization server metadata at {url} could not be read (HTTP {answer.status}); "
                "try again later."
            )
    return None


def _parse_server(
    url: str, issuer: str, body: dict[str, Any], *, allow_insecure_loopback: bool
) -> AuthorizationServer:
    named = body.get("issuer")
    # RFC 8414 §3.3 and OpenID Connect Discovery §4.3: the document must name the issuer it was
    # looked up for, or it may be an impostor's.
    if not isinstance(named, str) or named.rstrip("/") != issuer.rstrip("/"):
        raise AuthorizationFailed(
            f"the authorization server metadata at {url} names the issuer {_short(str(named))}, "
            f"not {issuer}; refusing to use it."
        )
    authorize, token = body.get("authorization_endpoint"), body.get("token_endpoint")
    if not isinstance(authorize, str) or not isinstance(token, str):
        raise AuthorizationFailed(
            f"the authorization server metadata at {url} lacks an authorization or token endpoint."
        )
    # MCP authorization, "Authorization Code Protection": without code_challenge_methods_supported
    # listing S256 the server may not enforce PKCE, and the client must refuse to proceed.
    if "S256" not in (_strings(body.get("code_challenge_methods_supported")) or ()):
        raise AuthorizationFailed(
            f"the authorization server {issuer} does not declare PKCE with S256 "
            "(code_challenge_methods_supported), which MCP requires; refusing to authorize with it."
        )
    registration = body.get("registration_endpoint")
    secure = allow_insecure_loopback
    return AuthorizationServer(
        issuer=named,
        authorization_endpoint=check_secure(
            authorize, allow_insecure_loopback=secure, what="authorization endpoint"
        ),
        token_endpoint=check_secure(token, allow_insecure_loopback=secure, what="token endpoint"),
        registration_endpoint=(
            check_secure(registration, allow_insecure_loopback=secure, what="registration endpoint")
            if isinstance(registration, str) and registration
            else None
        ),
        token_endpoint_auth_methods_supported=_strings(body.get("token_endpoint_auth_methods_supported")),
        iss_parameter_supported=body.get("authorization_response_iss_parameter_supported") is True,
        metadata_url=url,
    )


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(item for item in value if isinstance(item, str) and item)


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:199] + "…"
