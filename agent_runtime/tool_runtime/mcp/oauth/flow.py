"""OAuth 2.1 authorization of requests to one MCP server, as an ``httpx.Auth``.

Each request gets the stored access token (refreshed first when it has expired). On a 401 the
token is refreshed, and when that is impossible or fails the whole flow runs: discovery, client
registration, the authorization request (PKCE S256, ``state``, ``resource``) shown to the person
or followed headlessly, and the code exchange. On a 403 ``insufficient_scope`` the flow runs again
for the union of the scopes held and those challenged, at most three times for one request.

Why not the SDK's ``mcp.client.auth.OAuthClientProvider``: in the SDK this project installs (2.x)
it is an ``httpx2.Auth`` for the SDK's own HTTP stack, which an ``httpx`` client (our transport)
refuses; and whatever its version it leaves out parts the MCP specification and this client need:
the ``resource`` parameter is only sent when protected-resource metadata exists or the request
carries a recent ``MCP-Protocol-Version``, OpenID discovery is not tried on the server's origin when
there is no resource metadata, a 401 re-authorizes without trying the refresh token first, and a
step-up is tried once per request with no failure of its own when it does not help. Its structure
(and the specification's order of things) is followed here, on httpx.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx

from agent_runtime.tool_runtime.mcp.errors import McpAuthorizationError
from agent_runtime.tool_runtime.mcp.oauth.browser import AuthorizationPrompt
from agent_runtime.tool_runtime.mcp.oauth.challenge import BearerChallenge, bearer_challenge
from agent_runtime.tool_runtime.mcp.oauth.discovery import Discovery, discover
from agent_runtime.tool_runtime.mcp.oauth.failures import AuthorizationFailed, TokenRefused
from agent_runtime.tool_runtime.mcp.oauth.fetch import new_client
from agent_runtime.tool_runtime.mcp.oauth.headless import follow_to_redirect_uri
from agent_runtime.tool_runtime.mcp.oauth.loopback import CALLBACK_PATH, LoopbackReceiver
from agent_runtime.tool_runtime.mcp.oauth.models import ClientInfo, OAuthToken, union_scopes
from agent_runtime.tool_runtime.mcp.oauth.pkce import Pkce, new_state
from agent_runtime.tool_runtime.mcp.oauth.registration import configured_client, register_client
from agent_runtime.tool_runtime.mcp.oauth.storage import TokenStore
from agent_runtime.tool_runtime.mcp.oauth.token_endpoint import exchange_code, refresh_tokens
from agent_runtime.tool_runtime.mcp.oauth.urls import for_display

__all__ = ["MAX_STEP_UP_ATTEMPTS", "OAuthAuth"]

logger = logging.getLogger(__name__)

# MCP authorization, "Step-Up Authorization Flow": retry "no more than a few times", then treat it
# as a permanent failure.
MAX_STEP_UP_ATTEMPTS = 3


class OAuthAuth(httpx.Auth):
    """OAuth 2.1 authorization of an ``httpx.AsyncClient``'s requests to the MCP server at
    ``server_url`` (exported as ``oauth_auth`` too).

    ``prompt`` is given the authorization URL to show (the desktop opens the system browser) while a
    loopback listener waits up to ``timeout_s`` for the redirect. With ``headless=True`` (the probe)
    nobody is asked: the authorization URL's redirects are followed until the one back to the
    loopback redirect URI, which works with authorization servers that approve by themselves.
    ``client_id``/``client_secret`` are a pre-registered client (else dynamic registration);
    ``scopes`` are requested at the first authorization instead of ``scopes_supported``, together with
    any the server's challenge names. ``allow_insecure_loopback`` admits plain-HTTP authorization
    servers on loopback addresses, as for the MCP server itself.
    """

    # The request may be sent again after authorization: httpx reads a streamed body first.
    requires_request_body = True

    def __init__(
        self,
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
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.server_url = server_url
        self._store = store
        self._prompt = prompt
        self._client_id = client_id or None
        self._client_secret = client_secret or None
        self._scopes = " ".join(scopes) if scopes else None
        self._headless = headless
        self._allow_insecure_loopback = allow_insecure_loopback
        self._timeout_s = timeout_s
        self._clock = clock
        self._lock = asyncio.Lock()
        self._loaded = False
        self._token: OAuthToken | None = None
        self._discovery: Discovery | None = None
        self._client: ClientInfo | None = None
        self._requested: str | None = self._scopes

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        # Authorization awaits the store, the prompt and the loopback redirect: it needs a loop.
        raise RuntimeError("MCP OAuth authorization works with httpx.AsyncClient only.")

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        attempt = _Attempt(sent=await self._guarded(401, self._usable_token()))
        self._apply(request, attempt.sent)
        response = yield request
        while True:
            challenge = bearer_challenge(response)
            if response.status_code == 401:
                attempt.sent = await self._guarded(401, self._after_401(attempt, challenge))
            elif response.status_code == 403 and challenge.error == "insufficient_scope":
                attempt.sent = await self._guarded(403, self._after_insufficient_scope(attempt, challenge))
            else:
                return
            self._apply(request, attempt.sent)
            response = yield request

    async def _guarded(self, status: int, step: Awaitable[OAuthToken | None]) -> OAuthToken | None:
        """Run a step of the flow, telling its failure as the 401/403 it could not fix."""
        try:
            return await step
        except AuthorizationFailed as exc:
            raise McpAuthorizationError(status, str(exc)) from exc

    async def _after_401(self, attempt: _Attempt, challenge: BearerChallenge) -> OAuthToken | None:
        if attempt.authorized:
            raise AuthorizationFailed(
                "it refused the access token its authorization server had just issued" + _described(challenge)
            )
        async with self._lock:
            current = await self._load()
            if current is not None and current is not attempt.sent and not attempt.swapped:
                # Another request refreshed or re-authorized meanwhile: try its token.
                attempt.swapped = True
                return current
            if not attempt.refreshed:
                attempt.refreshed = True
                fresh = await self._refresh(challenge)
                if fresh is not None:
                    return fresh
            attempt.authorized = True
            return await self._authorize(challenge, scope=None)

    async def _after_insufficient_scope(
        self, attempt: _Attempt, challenge: BearerChallenge
    ) -> OAuthToken | None:
        if attempt.step_ups >= MAX_STEP_UP_ATTEMPTS:
            raise AuthorizationFailed(
                f"it still needs more permissions after {MAX_STEP_UP_ATTEMPTS} authorizations"
                + (f" (scope {challenge.scope})" if challenge.scope else "")
                + _described(challenge)
            )
        attempt.step_ups += 1
        async with self._lock:
            current = await self._load()
            if current is not None and current is not attempt.sent:
                return current  # another request stepped up meanwhile
            # The union keeps what other operations were granted (MCP authorization, "Scope Challenge
            # Handling"); the scope asked for last time counts too, in case the server granted less.
            held = union_scopes(self._requested, attempt.sent.scope if attempt.sent is not None else None)
            return await self._authorize(challenge, scope=union_scopes(held, challenge.scope))

    # ------------------------------------------------------------------ tokens

    def _apply(self, request: httpx.Request, token: OAuthToken | None) -> None:
        if token is not None:
            request.headers["Authorization"] = f"Bearer {token.access_token}"

    async def _load(self) -> OAuthToken | None:
        if not self._loaded:
            self._token = await self._store.get_tokens()
            self._client = self._client or await self._store.get_client_info()
            self._loaded = True
        return self._token

    async def _usable_token(self) -> OAuthToken | None:
        """The token to send: the stored one, refreshed first when it has expired. With a failed
        refresh the request goes without one, and its 401 starts authorization."""
        async with self._lock:
            token = await self._load()
            if token is None or not token.expired(self._clock()):
                return token
            if token.refresh_token is None:
                return None
            return await self._refresh(BearerChallenge())

    async def _save(self, token: OAuthToken) -> OAuthToken:
        self._token = token
        await self._store.set_tokens(token)
        return token

    async def _refresh(self, challenge: BearerChallenge) -> OAuthToken | None:
        """A refreshed token, or None when there is no refresh token or the server refused it (the
        caller then authorizes again). Called with the lock held."""
        token = self._token
        if token is None or token.refresh_token is None:
            return None
        async with new_client() as client:
            try:
                discovery = self._discovery or await self._discover(client, challenge)
                info = self._client_for_refresh(discovery)
                if info is None:
                    return None
                fresh = await refresh_tokens(
                    client, discovery.server, info, token, resource=discovery.resource, clock=self._clock
                )
            except TokenRefused as exc:
                logger.info("refreshing the token for %s failed: %s", for_display(self.server_url), exc)
                # The refresh token is spent: authorize afresh rather than send the old access token.
                self._token = None
                return None
        logger.info("refreshed the access token for %s", for_display(self.server_url))
        return await self._save(fresh)

    def _client_for_refresh(self, discovery: Discovery) -> ClientInfo | None:
        if self._client_id is not None:
            return configured_client(discovery.server, self._client_id, self._client_secret, None)
        info = self._client
        if info is not None and info.issuer == discovery.server.issuer and info.usable(self._clock()):
            return info
        return None

    # ------------------------------------------------------------------ authorization

    def _initial_scope(self, challenge: BearerChallenge) -> str | None:
        """MCP authorization, "Scope Selection Strategy": the challenge's scopes (authoritative for the
        request) with the configured ones, else every scope of the protected-resource metadata's
        ``scopes_supported``, else none."""
        if self._scopes is not None:
            return union_scopes(self._scopes, challenge.scope)
        if challenge.scope is not None:
            return challenge.scope
        metadata = self._discovery.resource_metadata if self._discovery is not None else None
        if metadata is not None and metadata.scopes_supported:
            return " ".join(metadata.scopes_supported)
        return None

    async def _discover(self, client: httpx.AsyncClient, challenge: BearerChallenge) -> Discovery:
        self._discovery = await discover(
            client, self.server_url, challenge, allow_insecure_loopback=self._allow_insecure_loopback
        )
        return self._discovery

    async def _authorize(self, challenge: BearerChallenge, *, scope: str | None) -> OAuthToken:
        """The whole authorization code flow; returns the new token. Called with the lock held."""
        prompt = None if self._headless else self._prompt
        if not self._headless and prompt is None:
            raise AuthorizationFailed("it needs authorization, and there is no one to ask for it here.")
        async with new_client() as client, AsyncExitStack() as stack:
            discovery = await self._discover(client, challenge)
            if scope is None:
                scope = self._initial_scope(challenge)
            self._requested = scope
            server = discovery.server
            logger.info("authorizing %s with %s", for_display(self.server_url), server.issuer)
            stored = await self._stored_client(discovery)
            receiver: LoopbackReceiver | None = None
            if self._headless:
                redirect_uri = (
                    stored.redirect_uri if stored and stored.redirect_uri else _unused_redirect_uri()
                )
            else:
                receiver = await stack.enter_async_context(await _bind(stored))
                redirect_uri = receiver.redirect_uri
            info = await self._client_for(client, discovery, stored, redirect_uri, scope)
            pkce, state = Pkce.new(), new_state()
            url = _authorization_url(
                server.authorization_endpoint,
                {
                    "response_type": "code",
                    "client_id": info.client_id,
                    "redirect_uri": redirect_uri,
                    "state": state,
                    "code_challenge": pkce.challenge,
                    "code_challenge_method": "S256",
                    "resource": discovery.resource,
                    **({"scope": scope} if scope else {}),
                },
            )
            if receiver is not None and prompt is not None:
                receiver.expect(state)
                await prompt(url)
                answer = await receiver.wait(self._timeout_s)
                await receiver.aclose()  # one redirect is all it takes
            else:
                answer = await follow_to_redirect_uri(
                    client, url, redirect_uri, allow_insecure_loopback=self._allow_insecure_loopback
                )
            code = _check_answer(answer, state, discovery)
            token = await exchange_code(
                client,
                server,
                info,
                code=code,
                verifier=pkce.verifier,
                redirect_uri=redirect_uri,
                resource=discovery.resource,
                requested_scope=scope,
                clock=self._clock,
            )
        logger.info("authorized %s", for_display(self.server_url))
        return await self._save(token)

    async def _stored_client(self, discovery: Discovery) -> ClientInfo | None:
        """The dynamically registered client kept for this authorization server, if any (client ids
        are per server: one registered with another issuer is not used)."""
        if self._client_id is not None:
            return None
        if not self._loaded:
            await self._load()
        info = self._client
        if info is None or not info.registered or info.issuer != discovery.server.issuer:
            return None
        if not info.usable(self._clock()):
            logger.info("the client secret for %s has expired: registering again", discovery.server.issuer)
            return None
        return info

    async def _client_for(
        self,
        client: httpx.AsyncClient,
        discovery: Discovery,
        stored: ClientInfo | None,
        redirect_uri: str,
        scope: str | None,
    ) -> ClientInfo:
        if self._client_id is not None:
            # Pre-registered (MCP authorization, "Client Registration Approaches": first choice).
            # RFC 8252 §7.3: the server accepts any port of a loopback redirect URI.
            return configured_client(discovery.server, self._client_id, self._client_secret, redirect_uri)
        if stored is not None and stored.redirect_uri == redirect_uri:
            return stored
        info = await register_client(client, discovery.server, redirect_uri, scope)
        self._client = info
        await self._store.set_client_info(info)
        return info


@dataclass
class _Attempt:
    """What has been tried for one request: each remedy at most once, step-ups at most three times."""

    sent: OAuthToken | None
    swapped: bool = False
    refreshed: bool = False
    authorized: bool = False
    step_ups: int = 0


def _described(challenge: BearerChallenge) -> str:
    return f" ({challenge.error_description[:200]})" if challenge.error_description else ""


async def _bind(stored: ClientInfo | None) -> LoopbackReceiver:
    """A receiver on the port of the stored client's redirect URI when it is free (so the client
    needs no new registration), else on any free port."""
    port = urlsplit(stored.redirect_uri).port if stored is not None and stored.redirect_uri else None
    if port:
        try:
            return await LoopbackReceiver.bind(port)
        except OSError:
            logger.info("loopback port %d is taken; registering a new redirect URI", port)
    return await LoopbackReceiver.bind(0)


def _unused_redirect_uri() -> str:
    """A loopback redirect URI for headless authorization, which never listens on it: the port of a
    socket bound and closed at once, so it names no other program's listener."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


def _authorization_url(endpoint: str, params: dict[str, str]) -> str:
    parts = urlsplit(endpoint)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _check_answer(answer: dict[str, str], state: str, discovery: Discovery) -> str:
    """The authorization code of the authorization response, once it is known to answer our request."""
    if not secrets.compare_digest(answer.get("state", "").encode(), state.encode()):
        # MCP authorization, "Open Redirection": discard a response whose state is not ours.
        raise AuthorizationFailed(
            "the authorization response does not carry the state Cowork sent, so it was discarded "
            "(it may have been forged)."
        )
    server = discovery.server
    iss = answer.get("iss")
    # RFC 9207 §2.4: a response naming another issuer is a mix-up attack; one without iss from a
    # server that promised to send it is refused too.
    if iss is not None and iss.rstrip("/") != server.issuer.rstrip("/"):
        raise AuthorizationFailed(
            f"the authorization response comes from {iss[:200]}, not from {server.issuer}; it was discarded."
        )
    if iss is None and server.iss_parameter_supported:
        raise AuthorizationFailed(
            f"the authorization response lacks the issuer {server.issuer} promised to send; it was discarded."
        )
    error = answer.get("error")
    if error:
        description = answer.get("error_description", "")
        raise AuthorizationFailed(
            f"the authorization server did not authorize Cowork ({error[:80]}"
            + (f": {description[:200]}" if description else "")
            + ")."
        )
    code = answer.get("code")
    if not code:
        raise AuthorizationFailed("the authorization response carries no authorization code.")
    return code
