"""Discovery of the authorization server after a 401, against a real server on loopback: each way
the MCP authorization specification lets a server publish its metadata, in the order it prescribes,
and the refusals (metadata for another resource, no PKCE, plain HTTP)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agent_runtime.tool_runtime.mcp.errors import McpAuthorizationError, McpInsecureUrl
from agent_runtime.tool_runtime.mcp.oauth import memory_token_store, oauth_auth
from agent_runtime.tool_runtime.mcp.oauth.challenge import bearer_challenge, parse_challenges
from agent_runtime.tool_runtime.mcp.oauth.urls import (
    authorization_server_metadata_urls,
    canonical_resource,
    check_secure,
    protected_resource_metadata_urls,
    resource_belongs_to,
)
from tests.support.mcp_oauth_server import OAuthServerOptions, OAuthTestServer


async def fetch(server: OAuthTestServer, **options: Any) -> httpx.Response:
    auth = oauth_auth(
        server.mcp_url,
        store=memory_token_store(),
        prompt=None,
        headless=True,
        allow_insecure_loopback=True,
        **options,
    )
    async with httpx.AsyncClient(auth=auth, timeout=30) as client:
        return await client.get(server.mcp_url)


def well_known_hits(server: OAuthTestServer) -> list[str]:
    return [hit.split(" ", 1)[1] for hit in server.records.hits if "/.well-known/" in hit or "/meta/" in hit]


# ---------------------------------------------------------------------- protected-resource metadata


async def test_the_challenges_resource_metadata_url_is_used_first() -> None:
    with OAuthTestServer(OAuthServerOptions(resource_metadata_at="custom")) as server:
        response = await fetch(server)
    assert response.status_code == 200
    assert well_known_hits(server) == ["/meta/resource.json", "/.well-known/oauth-authorization-server"]


async def test_without_a_challenge_url_the_path_aware_well_known_uri_comes_first() -> None:
    options = OAuthServerOptions(resource_metadata_at="path", challenge_resource_metadata=False)
    with OAuthTestServer(options) as server:
        response = await fetch(server)
    assert response.status_code == 200
    assert well_known_hits(server) == [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
    ]


async def test_then_the_root_well_known_uri() -> None:
    options = OAuthServerOptions(resource_metadata_at="root", challenge_resource_metadata=False)
    with OAuthTestServer(options) as server:
        response = await fetch(server)
    assert response.status_code == 200
    assert well_known_hits(server) == [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
    ]


async def test_metadata_for_another_resource_stops_authorization() -> None:
    options = OAuthServerOptions(resource_override="https://elsewhere.example/mcp")
    with OAuthTestServer(options) as server, pytest.raises(McpAuthorizationError) as raised:
        await fetch(server)
    assert "https://elsewhere.example/mcp" in str(raised.value)
    assert raised.value.status == 401
    # Nothing was sent to the authorization server: no registration, no authorization, no token.
    assert not server.records.registrations
    assert not server.records.authorizations
    assert not server.records.token_requests


async def test_metadata_for_a_sibling_path_on_the_same_server_stops_authorization_too() -> None:
    with OAuthTestServer(OAuthServerOptions(resource_override="http://127.0.0.1:1/other")) as server:
        server.options.resource_override = f"{server.origin}/other"
        with pytest.raises(McpAuthorizationError, match="/other"):
            await fetch(server)
    assert not server.records.authorizations


async def test_metadata_naming_the_servers_origin_is_accepted_and_the_token_is_for_it() -> None:
    options = OAuthServerOptions(resource_metadata_at="root")
    with OAuthTestServer(options) as server:
        server.options.resource_override = server.origin
        server.resource = server.origin
        response = await fetch(server)
    assert response.status_code == 200
    assert server.records.authorizations[0]["resource"] == server.origin
    assert server.records.token_requests[0].form["resource"] == server.origin


# ---------------------------------------------------------------------- authorization server metadata


@pytest.mark.parametrize(
    ("forms", "expected"),
    [
        ({"oauth"}, ["/.well-known/oauth-authorization-server"]),
        ({"oidc"}, ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]),
    ],
    ids=["rfc8414", "openid"],
)
async def test_an_issuer_without_a_path_is_looked_up_in_both_forms(
    forms: set[str], expected: list[str]
) -> None:
    with OAuthTestServer(OAuthServerOptions(metadata_forms=frozenset(forms))) as server:
        response = await fetch(server)
    assert response.status_code == 200
    assert well_known_hits(server)[1:] == expected


@pytest.mark.parametrize(
    ("form", "tried"),
    [
        ("oauth", 1),
        ("oidc", 2),
        ("oidc-append", 3),
    ],
    ids=["rfc8414-inserted", "openid-inserted", "openid-appended"],
)
async def test_an_issuer_with_a_path_is_looked_up_in_the_specifications_order(form: str, tried: int) -> None:
    options = OAuthServerOptions(issuer_path="/tenant1", metadata_forms=frozenset({form}))
    with OAuthTestServer(options) as server:
        response = await fetch(server)
    assert response.status_code == 200
    order = [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/tenant1/.well-known/openid-configuration",
    ]
    assert well_known_hits(server)[1:] == order[:tried]
    assert "POST /tenant1/token" in server.records.hits


@pytest.mark.parametrize("form", ["oauth", "oidc"])
async def test_without_resource_metadata_the_origins_metadata_is_used(form: str) -> None:
    options = OAuthServerOptions(resource_metadata_at=None, metadata_forms=frozenset({form}))
    with OAuthTestServer(options) as server:
        response = await fetch(server)
    assert response.status_code == 200
    hits = well_known_hits(server)
    assert hits[:2] == ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
    assert hits[2] == "/.well-known/oauth-authorization-server"
    assert hits[-1] == (
        "/.well-known/oauth-authorization-server" if form == "oauth" else "/.well-known/openid-configuration"
    )
    # With no resource metadata the token is requested for the endpoint itself.
    assert server.records.authorizations[0]["resource"] == server.mcp_url


async def test_without_any_metadata_the_default_endpoints_at_the_origin_are_used() -> None:
    options = OAuthServerOptions(resource_metadata_at=None, metadata_forms=frozenset())
    with OAuthTestServer(options) as server:
        response = await fetch(server)
    assert response.status_code == 200
    flow = [hit for hit in server.records.hits if "/.well-known/" not in hit]
    assert flow == ["GET /mcp", "POST /register", "GET /authorize", "POST /token", "GET /mcp"]


async def test_metadata_naming_another_issuer_is_refused() -> None:
    options = OAuthServerOptions(issuer_path="/tenant1", issuer_claimed="https://impostor.example")
    with (
        OAuthTestServer(options) as server,
        pytest.raises(McpAuthorizationError, match=r"names the issuer https://impostor\.example"),
    ):
        await fetch(server)
    assert not server.records.authorizations


async def test_an_authorization_server_that_does_not_declare_pkce_s256_is_refused() -> None:
    for methods in (None, ["plain"]):
        with (
            OAuthTestServer(OAuthServerOptions(code_challenge_methods=methods)) as server,
            pytest.raises(McpAuthorizationError, match="PKCE"),
        ):
            await fetch(server)
        assert not server.records.authorizations


async def test_plain_http_authorization_servers_need_the_loopback_opt_in() -> None:
    with OAuthTestServer() as server:
        auth = oauth_auth(server.mcp_url, store=memory_token_store(), prompt=None, headless=True)
        async with httpx.AsyncClient(auth=auth, timeout=30) as client:
            with pytest.raises(McpInsecureUrl, match="allowInsecureLoopback"):
                await client.get(server.mcp_url)


# ---------------------------------------------------------------------- the pieces


def test_well_known_uris_follow_the_specifications_examples() -> None:
    assert protected_resource_metadata_urls("https://example.com/public/mcp", None) == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://example.com", "https://example.com/prm") == [
        "https://example.com/prm",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_the_canonical_resource_uri() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com/") == "https://mcp.example.com"
    assert (
        canonical_resource("https://mcp.example.com:8443/server/mcp#frag")
        == "https://mcp.example.com:8443/server/mcp"
    )
    assert canonical_resource("https://mcp.example.com/Mcp") == "https://mcp.example.com/Mcp"


def test_which_published_resources_name_this_server() -> None:
    server = "https://mcp.example.com/api/mcp"
    assert resource_belongs_to("https://mcp.example.com/api/mcp", server)
    assert resource_belongs_to("https://MCP.example.com/api/mcp/", server)
    assert resource_belongs_to("https://mcp.example.com", server)
    assert resource_belongs_to("https://mcp.example.com/api", server)
    assert not resource_belongs_to("https://mcp.example.com/ap", server)
    assert not resource_belongs_to("https://mcp.example.com/api/mcp/more", server)
    assert not resource_belongs_to("https://mcp.example.com/other", server)
    assert not resource_belongs_to("http://mcp.example.com/api/mcp", server)
    assert not resource_belongs_to("https://mcp.example.com:444/api/mcp", server)
    assert not resource_belongs_to("https://evil.example/api/mcp", server)


def test_which_authorization_urls_are_secure_enough() -> None:
    assert check_secure("https://auth.example.com/token", allow_insecure_loopback=False, what="x")
    for loopback in (
        "http://127.0.0.1:9/t",
        "http://localhost:9/t",
        "http://[::1]:9/t",
        "http://127.8.0.1/t",
    ):
        assert check_secure(loopback, allow_insecure_loopback=True, what="x") == loopback
        with pytest.raises(McpInsecureUrl, match="allowInsecureLoopback"):
            check_secure(loopback, allow_insecure_loopback=False, what="x")
    for refused in (
        "http://auth.example.com/token",
        "http://127.0.0.1.nip.io/token",
        "http://127.0.0.1@auth.example.com/token",
        "https://user:pw@auth.example.com/token",
        "ftp://auth.example.com/token",
        "http://127.1/token",
    ):
        with pytest.raises(McpInsecureUrl):
            check_secure(refused, allow_insecure_loopback=True, what="token endpoint")


def test_www_authenticate_challenges_are_parsed_with_quoting_and_several_schemes() -> None:
    header = (
        'Basic realm="x", Bearer error="insufficient_scope", scope="files:read  files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="needs \\"write\\", sorry"'
    )
    assert parse_challenges([header])[0] == ("basic", {"realm": "x"})
    challenge = bearer_challenge(httpx.Response(403, headers={"WWW-Authenticate": header}))
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == "files:read files:write"
    assert challenge.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource"
    assert challenge.error_description == 'needs "write", sorry'
    unquoted = bearer_challenge(
        httpx.Response(401, headers={"WWW-Authenticate": "Bearer error=invalid_token"})
    )
    assert unquoted.error == "invalid_token"
    assert bearer_challenge(httpx.Response(401)).error is None
    assert (
        bearer_challenge(httpx.Response(401, headers={"WWW-Authenticate": "Negotiate abc=="})).scope is None
    )
