"""The authorization code flow against a real authorization server on loopback: PKCE, state, the
resource parameter, scope selection and step-up, client authentication, refresh, the interactive
loopback redirect and the headless mode."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from agent_runtime.tool_runtime.mcp.errors import McpAuthorizationError
from agent_runtime.tool_runtime.mcp.oauth import (
    MAX_STEP_UP_ATTEMPTS,
    TokenStore,
    bearer_auth,
    memory_token_store,
    oauth_auth,
)
from tests.support.mcp_oauth_server import (
    Browser,
    OAuthServerOptions,
    OAuthTestServer,
    PreregisteredClient,
    s256,
)


def auth_for(server: OAuthTestServer, **options: Any) -> httpx.Auth:
    options.setdefault("store", memory_token_store())
    options.setdefault("prompt", None)
    options.setdefault("headless", options["prompt"] is None)
    return oauth_auth(server.mcp_url, allow_insecure_loopback=True, **options)


async def fetch(auth: httpx.Auth, server: OAuthTestServer, *, needs: str | None = None) -> httpx.Response:
    headers = {"X-Needs-Scope": needs} if needs else {}
    async with httpx.AsyncClient(auth=auth, timeout=30) as client:
        return await client.get(server.mcp_url, headers=headers)


# ---------------------------------------------------------------------- PKCE, state, resource


async def test_the_code_exchange_proves_the_pkce_verifier_and_names_the_resource_twice() -> None:
    with OAuthTestServer() as server:
        response = await fetch(auth_for(server), server)
    assert response.status_code == 200
    authorization = server.records.authorizations[0]
    exchange = server.records.token_requests[0]
    assert authorization["code_challenge_method"] == "S256"
    assert s256(exchange.form["code_verifier"]) == authorization["code_challenge"]
    assert 43 <= len(exchange.form["code_verifier"]) <= 128
    assert authorization["resource"] == exchange.form["resource"] == server.mcp_url
    assert authorization["redirect_uri"] == exchange.form["redirect_uri"]
    assert authorization["redirect_uri"].startswith("http://127.0.0.1:")
    assert authorization["redirect_uri"].endswith("/callback")
    assert len(authorization["state"]) >= 32


async def test_each_authorization_uses_a_fresh_verifier_and_state() -> None:
    with OAuthTestServer() as server:
        await fetch(auth_for(server), server)
        await fetch(auth_for(server), server)
    first, second = server.records.authorizations
    assert first["state"] != second["state"]
    assert first["code_challenge"] != second["code_challenge"]


async def test_a_response_with_another_state_is_discarded_headless() -> None:
    with (
        OAuthTestServer(OAuthServerOptions(state_override="forged")) as server,
        pytest.raises(McpAuthorizationError, match="state"),
    ):
        await fetch(auth_for(server), server)
    assert not server.records.token_requests  # the code was never redeemed


async def test_the_loopback_refuses_a_forged_redirect_and_waits_for_the_real_one() -> None:
    browser = Browser(forge_first=True)
    with OAuthTestServer() as server:
        response = await fetch(auth_for(server, prompt=browser), server)
    assert response.status_code == 200
    forged, real = browser.pages
    assert forged.status_code == 400
    assert "does not belong" in forged.text
    assert real.status_code == 200
    assert "close this tab" in real.text
    # Only the real code was exchanged.
    assert [request.status for request in server.records.token_requests] == [200]
    assert server.records.token_requests[0].form["code"] != "forged-code"


async def test_an_iss_parameter_is_checked_when_the_server_sends_it() -> None:
    with OAuthTestServer(OAuthServerOptions(send_iss=True)) as server:
        assert (await fetch(auth_for(server), server)).status_code == 200


# ---------------------------------------------------------------------- the interactive flow


async def test_the_prompt_gets_the_authorization_url_and_the_loopback_receives_the_redirect() -> None:
    browser = Browser()
    with OAuthTestServer() as server:
        response = await fetch(auth_for(server, prompt=browser), server)
    assert response.status_code == 200
    assert len(browser.urls) == 1
    assert browser.urls[0].startswith(f"{server.issuer}/authorize?")
    page = browser.pages[0]
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "You can close this tab" in page.text


async def test_the_loopback_is_listening_before_the_url_is_shown() -> None:
    with OAuthTestServer() as server:
        seen: list[int] = []

        async def prompt(url: str) -> None:
            redirect_uri = httpx.URL(url).params["redirect_uri"]
            # Before anybody opens the page, the redirect URI already answers (404 for other paths).
            async with httpx.AsyncClient() as client:
                probe = await client.get(httpx.URL(redirect_uri).copy_with(path="/favicon.ico"))
            seen.append(probe.status_code)
            await Browser()(url)

        response = await fetch(auth_for(server, prompt=prompt), server)
    assert response.status_code == 200
    assert seen == [404]


async def test_nobody_answering_the_prompt_times_out_with_a_clear_error() -> None:
    async def ignore(url: str) -> None:
        return None

    with OAuthTestServer() as server, pytest.raises(McpAuthorizationError, match=r"within 0\.5 s") as raised:
        await asyncio.wait_for(fetch(auth_for(server, prompt=ignore, timeout_s=0.5), server), 20)
    assert raised.value.status == 401


async def test_without_a_prompt_or_headless_mode_authorization_is_refused() -> None:
    with OAuthTestServer() as server, pytest.raises(McpAuthorizationError, match="no one to ask"):
        await fetch(auth_for(server, headless=False), server)


async def test_the_authorization_servers_refusal_is_reported() -> None:
    async def deny(url: str) -> None:
        redirect_uri = httpx.URL(url).params["redirect_uri"]
        state = httpx.URL(url).params["state"]
        async with httpx.AsyncClient() as client:
            await client.get(redirect_uri, params={"error": "access_denied", "state": state})

    with OAuthTestServer() as server, pytest.raises(McpAuthorizationError, match="access_denied"):
        await fetch(auth_for(server, prompt=deny), server)


# ---------------------------------------------------------------------- headless


async def test_headless_follows_the_redirects_to_the_loopback_uri_without_listening() -> None:
    with OAuthTestServer() as server:
        response = await fetch(auth_for(server, headless=True), server)
    assert response.status_code == 200
    assert response.json()["ok"] is True


async def test_headless_stops_clearly_at_a_sign_in_page() -> None:
    with (
        OAuthTestServer(OAuthServerOptions(auto_approve=False)) as server,
        pytest.raises(McpAuthorizationError, match="approve by themselves"),
    ):
        await fetch(auth_for(server, headless=True), server)


# ---------------------------------------------------------------------- scopes


@pytest.mark.parametrize(
    ("challenge_scope", "scopes_supported", "expected"),
    [
        ("files:read", ["a", "b"], "files:read"),
        (None, ["a", "b"], "a b"),
        (None, None, None),
    ],
    ids=["from-challenge", "all-scopes-supported", "none"],
)
async def test_the_scope_requested_first(
    challenge_scope: str | None, scopes_supported: list[str] | None, expected: str | None
) -> None:
    options = OAuthServerOptions(challenge_scope=challenge_scope, scopes_supported=scopes_supported)
    with OAuthTestServer(options) as server:
        assert (await fetch(auth_for(server), server)).status_code == 200
    assert server.records.authorizations[0].get("scope") == expected


async def test_configured_scopes_are_requested() -> None:
    options = OAuthServerOptions(scopes_supported=["a", "b"])
    with OAuthTestServer(options) as server:
        assert (await fetch(auth_for(server, scopes=["tools:call"]), server)).status_code == 200
    assert server.records.authorizations[0]["scope"] == "tools:call"


async def test_insufficient_scope_steps_up_to_the_union_of_scopes() -> None:
    options = OAuthServerOptions(challenge_scope="files:read")
    with OAuthTestServer(options) as server:
        auth = auth_for(server)
        assert (await fetch(auth, server)).status_code == 200
        response = await fetch(auth, server, needs="files:write")
    assert response.status_code == 200
    assert [a.get("scope") for a in server.records.authorizations] == ["files:read", "files:read files:write"]
    assert server.records.resource_statuses == [401, 200, 403, 200]


async def test_step_up_gives_up_after_three_attempts() -> None:
    options = OAuthServerOptions(challenge_scope="files:read", grantable_scopes={"files:read"})
    with OAuthTestServer(options) as server:
        auth = auth_for(server)
        assert (await fetch(auth, server)).status_code == 200
        with pytest.raises(McpAuthorizationError) as raised:
            await fetch(auth, server, needs="admin")
    assert raised.value.status == 403
    assert f"after {MAX_STEP_UP_ATTEMPTS} authorizations" in str(raised.value)
    scopes = [a.get("scope") for a in server.records.authorizations]
    assert scopes == ["files:read"] + ["files:read admin"] * MAX_STEP_UP_ATTEMPTS
    assert server.records.resource_statuses.count(403) == MAX_STEP_UP_ATTEMPTS + 1


# ---------------------------------------------------------------------- client authentication


@pytest.mark.parametrize(
    ("method", "seen"),
    [("client_secret_basic", "basic"), ("client_secret_post", "post"), ("none", "none")],
)
async def test_a_registered_client_authenticates_the_way_the_server_names(method: str, seen: str) -> None:
    options = OAuthServerOptions(token_auth_methods=[method])
    with OAuthTestServer(options) as server:
        auth = auth_for(server)
        assert (await fetch(auth, server)).status_code == 200
        server.revoke_access_tokens()
        assert (await fetch(auth, server)).status_code == 200  # through a refresh
    assert server.records.registrations[0]["token_endpoint_auth_method"] == method
    assert server.records.registrations[0]["redirect_uris"][0].startswith("http://127.0.0.1:")
    grants = [(r.form["grant_type"], r.client_auth, r.status) for r in server.records.token_requests]
    assert grants == [("authorization_code", seen, 200), ("refresh_token", seen, 200)]


@pytest.mark.parametrize(
    ("method", "secret", "seen"),
    [
        ("client_secret_basic", "s3cret: with/odd+chars", "basic"),
        ("client_secret_post", "s3cret", "post"),
        ("none", None, "none"),
    ],
)
async def test_a_preregistered_client_is_used_without_registration(
    method: str, secret: str | None, seen: str
) -> None:
    options = OAuthServerOptions(
        registration=False,
        token_auth_methods=[method],
        preregistered=[PreregisteredClient("cowork-desktop", secret, method)],
    )
    with OAuthTestServer(options) as server:
        response = await fetch(auth_for(server, client_id="cowork-desktop", client_secret=secret), server)
    assert response.status_code == 200
    assert response.json()["client_id"] == "cowork-desktop"
    assert not server.records.registrations
    assert server.records.token_requests[0].client_auth == seen


async def test_without_registration_or_a_configured_client_the_error_says_what_to_configure() -> None:
    with (
        OAuthTestServer(OAuthServerOptions(registration=False)) as server,
        pytest.raises(McpAuthorizationError, match="configure a client id"),
    ):
        await fetch(auth_for(server), server)


async def test_a_registered_client_is_reused_by_the_next_authorization() -> None:
    store = memory_token_store()
    with OAuthTestServer() as server:
        await fetch(auth_for(server, store=store), server)
        server.revoke_access_tokens()
        server.revoke_refresh_tokens()
        assert (await fetch(auth_for(server, store=store), server)).status_code == 200
    assert len(server.records.registrations) == 1
    assert len(server.records.authorizations) == 2


async def test_a_registration_whose_secret_expired_is_replaced() -> None:
    options = OAuthServerOptions(token_auth_methods=["client_secret_post"], secret_expires_in=-1)
    store = memory_token_store()
    with OAuthTestServer(options) as server:
        assert (await fetch(auth_for(server, store=store), server)).status_code == 200
        server.revoke_access_tokens()
        server.revoke_refresh_tokens()
        assert (await fetch(auth_for(server, store=store), server)).status_code == 200
    assert len(server.records.registrations) == 2


async def test_headless_reports_a_refused_authorization_request() -> None:
    store = memory_token_store()
    with OAuthTestServer() as server:
        assert (await fetch(auth_for(server, store=store), server)).status_code == 200
        server.forget_registered_clients()
        server.revoke_access_tokens()
        server.revoke_refresh_tokens()
        with pytest.raises(McpAuthorizationError, match=r"refused the authorization request .*HTTP 400"):
            await fetch(auth_for(server, store=store), server)


# ---------------------------------------------------------------------- refresh


async def test_an_expired_token_is_refreshed_before_the_request() -> None:
    with OAuthTestServer(OAuthServerOptions(access_token_ttl=2)) as server:
        auth = auth_for(server)
        assert (await fetch(auth, server)).status_code == 200
        await asyncio.sleep(2.1)
        assert (await fetch(auth, server)).status_code == 200
    grants = [r.form["grant_type"] for r in server.records.token_requests]
    assert grants == ["authorization_code", "refresh_token"]
    assert server.records.token_requests[1].form["resource"] == server.mcp_url
    assert server.records.resource_statuses == [401, 200, 200]  # no 401 for the second request
    assert len(server.records.authorizations) == 1


async def test_a_401_is_answered_by_refreshing_before_authorizing_again() -> None:
    with OAuthTestServer() as server:
        auth = auth_for(server)
        assert (await fetch(auth, server)).status_code == 200
        server.revoke_access_tokens()
        assert (await fetch(auth, server)).status_code == 200
    assert [r.form["grant_type"] for r in server.records.token_requests] == [
        "authorization_code",
        "refresh_token",
    ]
    assert len(server.records.authorizations) == 1


async def test_a_failed_refresh_leads_to_a_new_authorization() -> None:
    with OAuthTestServer() as server:
        auth = auth_for(server)
        assert (await fetch(auth, server)).status_code == 200
        server.revoke_access_tokens()
        server.revoke_refresh_tokens()
        assert (await fetch(auth, server)).status_code == 200
    grants = [(r.form["grant_type"], r.status) for r in server.records.token_requests]
    assert grants == [("authorization_code", 200), ("refresh_token", 400), ("authorization_code", 200)]
    assert len(server.records.authorizations) == 2


async def test_requests_waiting_on_one_authorization_share_its_token() -> None:
    with OAuthTestServer() as server:
        auth = auth_for(server)
        async with httpx.AsyncClient(auth=auth, timeout=30) as client:
            responses = await asyncio.gather(*(client.get(server.mcp_url) for _ in range(4)))
    assert [r.status_code for r in responses] == [200] * 4
    assert len(server.records.authorizations) == 1


async def test_tokens_in_the_store_are_used_without_authorizing() -> None:
    store: TokenStore = memory_token_store()
    with OAuthTestServer() as server:
        await fetch(auth_for(server, store=store), server)
        response = await fetch(auth_for(server, store=store, headless=False), server)
    assert response.status_code == 200
    assert len(server.records.authorizations) == 1


# ---------------------------------------------------------------------- static bearer tokens


async def test_a_static_bearer_token_is_sent_and_a_refusal_raises() -> None:
    with OAuthTestServer() as server:
        await fetch(auth_for(server), server)
        token = server.issued_access_tokens()[0]
        assert (await fetch(bearer_auth(token), server)).status_code == 200
        with pytest.raises(McpAuthorizationError, match="refused the configured bearer token") as raised:
            await fetch(bearer_auth("not-a-token"), server)
        assert raised.value.status == 401
        with pytest.raises(McpAuthorizationError, match="scope admin"):
            await fetch(bearer_auth(token), server, needs="admin")
    assert "not-a-token" not in repr(bearer_auth("not-a-token"))


async def test_an_issued_token_a_header_cannot_carry_is_refused_without_being_quoted() -> None:
    with (
        OAuthTestServer(OAuthServerOptions(access_token_suffix="\r\nX-Injected: 1")) as server,
        pytest.raises(McpAuthorizationError, match="cannot carry") as raised,
    ):
        await fetch(auth_for(server), server)
    token = server.issued_access_tokens()[0]
    assert token not in str(raised.value)
    assert token.split("\r")[0] not in str(raised.value)


def test_a_bearer_token_a_header_cannot_carry_is_refused_without_being_quoted() -> None:
    with pytest.raises(McpAuthorizationError) as raised:
        bearer_auth("secret\nX-Injected: 1")
    assert "secret" not in str(raised.value)
