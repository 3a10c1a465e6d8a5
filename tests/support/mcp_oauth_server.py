"""An OAuth 2.1 authorization server and a protected MCP resource on loopback, for the MCP
authorization tests: a real Starlette app on uvicorn in a thread, configurable in the ways the
MCP authorization specification lets servers differ, and strict where a client can go wrong.

What it checks, so a test passes only if the client does it right: PKCE (S256 of the verifier equals
the challenge), the ``resource`` parameter in the authorization and every token request (and equal
between them), exact redirect URIs (any loopback port for pre-registered clients, RFC 8252 §7.3),
the client authentication method registered for the client, the token's audience and scopes at the
resource. It approves every authorization request at once (``auto_approve``), so a test plays the
browser by following the redirect, and the headless mode works.

``OAuthServerOptions`` chooses which metadata documents exist and where, the ``resource`` it
publishes, ``scopes_supported``, the scope of its challenges, the token endpoint's authentication
methods, dynamic registration and pre-registered clients, token lifetimes, and what scopes it grants.
A request to the resource with ``X-Needs-Scope: a b`` gets a 403 ``insufficient_scope`` unless the
token holds those scopes. ``server.records`` keeps every request so tests can assert on the flow.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import httpx
import uvicorn
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "Browser",
    "OAuthServerOptions",
    "OAuthTestServer",
    "PreregisteredClient",
    "RecordingKeyring",
    "Records",
    "s256",
]


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass(frozen=True)
class PreregisteredClient:
    client_id: str
    client_secret: str | None
    method: str  # client_secret_basic | client_secret_post | none


@dataclass
class OAuthServerOptions:
    mcp_path: str = "/mcp"
    # "" → the issuer is the origin; "/tenant1" → the path-aware metadata forms apply.
    issuer_path: str = ""
    # Where protected-resource metadata is served: "path" (/.well-known/oauth-protected-resource/mcp),
    # "root" (/.well-known/oauth-protected-resource), "custom" (only reachable through the challenge's
    # resource_metadata), or None (the server publishes none: the 2025-03-26 fallback).
    resource_metadata_at: str | None = "path"
    challenge_resource_metadata: bool = True
    # The `resource` the metadata names; default: the endpoint's URL.
    resource_override: str | None = None
    scopes_supported: list[str] | None = None
    challenge_scope: str | None = None
    # Which authorization server metadata documents exist: "oauth" (RFC 8414, path inserted),
    # "oidc" (OpenID, path inserted), "oidc-append" (OpenID, path appended). Empty: none, and the
    # endpoints are /authorize, /token and /register at the origin.
    metadata_forms: frozenset[str] = frozenset({"oauth"})
    code_challenge_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    token_auth_methods: list[str] | None = field(default_factory=lambda: ["none"])
    registration: bool = True
    # client_secret_expires_at of registered clients, in seconds from now (None: 0, never).
    secret_expires_in: int | None = None
    preregistered: list[PreregisteredClient] = field(default_factory=list)
    # Scopes the server will grant (None: whatever is asked).
    grantable_scopes: set[str] | None = None
    access_token_ttl: int | None = 3600
    issue_refresh_tokens: bool = True
    # Appended to every access token: a broken server's token (e.g. with a line break).
    access_token_suffix: str = ""
    auto_approve: bool = True
    # Replaces the state in the redirect (a forged or mixed-up response).
    state_override: str | None = None
    # The issuer the metadata documents claim (an impostor's); default: the real one.
    issuer_claimed: str | None = None
    send_iss: bool = False


@dataclass
class TokenRequest:
    form: dict[str, str]
    client_auth: str  # "basic" | "post" | "none"
    status: int


@dataclass
class Records:
    hits: list[str] = field(default_factory=list)  # "GET /path" of every request, in order
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[TokenRequest] = field(default_factory=list)
    registrations: list[dict[str, Any]] = field(default_factory=list)
    resource_statuses: list[int] = field(default_factory=list)


@dataclass
class _Client:
    client_id: str
    client_secret: str | None
    method: str
    redirect_uris: list[str]
    preregistered: bool


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    resource: str
    scope: str


@dataclass
class _Access:
    client_id: str
    resource: str
    scope: str
    expires_at: float | None


class OAuthTestServer:
    """``with OAuthTestServer(options) as server:`` serves on ``server.origin``; the MCP endpoint is
    ``server.mcp_url``. ``inner_app`` (an ASGI app, e.g. an MCP SDK server) answers authorized
    requests to the endpoint; without one the endpoint answers a small JSON document."""

    def __init__(
        self, options: OAuthServerOptions | None = None, *, inner_app: ASGIApp | None = None
    ) -> None:
        self.options = options or OAuthServerOptions()
        self.records = Records()
        self._inner = inner_app
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.origin = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self.mcp_url = self.origin + self.options.mcp_path
        self.issuer = self.origin + self.options.issuer_path
        self.resource = (self.options.resource_override or self.mcp_url).rstrip("/")
        self._clients: dict[str, _Client] = {
            c.client_id: _Client(c.client_id, c.client_secret, c.method, [], True)
            for c in self.options.preregistered
        }
        self._codes: dict[str, _Grant] = {}
        self._access: dict[str, _Access] = {}
        self._refresh: dict[str, _Access] = {}
        self._lock = threading.Lock()
        # Every (kind, value) handed out: "code", "access", "refresh", "secret"; for leak tests.
        self.issued: list[tuple[str, str]] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control

    def revoke_access_tokens(self) -> None:
        with self._lock:
            self._access.clear()

    def revoke_refresh_tokens(self) -> None:
        with self._lock:
            self._refresh.clear()

    def forget_registered_clients(self) -> None:
        with self._lock:
            self._clients = {k: c for k, c in self._clients.items() if c.preregistered}

    def issued_access_tokens(self) -> list[str]:
        with self._lock:
            return list(self._access)

    @property
    def resource_metadata_url(self) -> str | None:
        where = self.options.resource_metadata_at
        if where == "path":
            return f"{self.origin}/.well-known/oauth-protected-resource{self.options.mcp_path}"
        if where == "root":
            return f"{self.origin}/.well-known/oauth-protected-resource"
        if where == "custom":
            return f"{self.origin}/meta/resource.json"
        return None

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> OAuthTestServer:
        started = threading.Event()
        app = self._app()

        class Server(uvicorn.Server):
            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets)
                started.set()

        config = uvicorn.Config(
            app, lifespan="on", log_config=None, access_log=False, timeout_graceful_shutdown=2
        )
        self._server = Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, name="mcp-oauth-server", daemon=True
        )
        self._thread.start()
        if not started.wait(20):
            raise RuntimeError("the MCP OAuth test server did not start")
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._server is not None
        assert self._thread is not None
        self._server.should_exit = True
        self._thread.join(20)
        self._sock.close()

    # ------------------------------------------------------------------ the app

    def _app(self) -> ASGIApp:
        inner = self._inner

        @contextlib.asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            router = getattr(inner, "router", None)
            if router is not None and hasattr(router, "lifespan_context"):
                async with router.lifespan_context(inner):
                    yield
            else:
                yield

        starlette = Starlette(lifespan=lifespan)
        server = self

        async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await starlette(scope, receive, send)
                return
            request = Request(scope, receive)
            server.records.hits.append(f"{request.method} {request.url.path}")
            response = await server._route(request)
            if response is None:  # an authorized request for the inner MCP app
                assert inner is not None
                await inner(scope, request.receive, send)
                return
            await response(scope, receive, send)

        return asgi

    async def _route(self, request: Request) -> Response | None:
        path, opts = request.url.path, self.options
        issuer_path = opts.issuer_path
        if path == self.options.mcp_path or path.startswith(self.options.mcp_path + "/"):
            return self._protected(request)
        if self.resource_metadata_url is not None and path == urlsplit(self.resource_metadata_url).path:
            return self._resource_metadata()
        documents = {
            "oauth": f"/.well-known/oauth-authorization-server{issuer_path}",
            "oidc": f"/.well-known/openid-configuration{issuer_path}",
            "oidc-append": f"{issuer_path}/.well-known/openid-configuration",
        }
        if any(path == documents[form] for form in opts.metadata_forms):
            return JSONResponse(self._server_metadata())
        if path == f"{issuer_path}/authorize" and request.method == "GET":
            return self._authorize(request)
        if path == f"{issuer_path}/token" and request.method == "POST":
            return await self._token(request)
        if path == f"{issuer_path}/register" and request.method == "POST" and opts.registration:
            return await self._register(request)
        return JSONResponse({"error": "not_found"}, status_code=404)

    # ------------------------------------------------------------------ resource server

    def _challenge(self, *, error: str | None = None, scope: str | None = None) -> str:
        params = []
        if error:
            params.append(f'error="{error}"')
        if scope:
            params.append(f'scope="{scope}"')
        if self.options.challenge_resource_metadata and self.resource_metadata_url is not None:
            params.append(f'resource_metadata="{self.resource_metadata_url}"')
        return "Bearer " + ", ".join(params) if params else "Bearer"

    def _protected(self, request: Request) -> Response | None:
        header = request.headers.get("authorization", "")
        token = header[7:] if header.lower().startswith("bearer ") else None
        with self._lock:
            access = self._access.get(token) if token else None
        valid = (
            access is not None
            and (access.expires_at is None or time.time() < access.expires_at)
            and access.resource == self.resource
        )
        if not valid:
            self.records.resource_statuses.append(401)
            challenge = self._challenge(
                error="invalid_token" if token else None, scope=self.options.challenge_scope
            )
            return JSONResponse(
                {"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": challenge}
            )
        assert access is not None
        needed = request.headers.get("x-needs-scope", "").split()
        if not set(needed) <= set(access.scope.split()):
            self.records.resource_statuses.append(403)
            challenge = self._challenge(error="insufficient_scope", scope=" ".join(needed))
            return JSONResponse(
                {"error": "forbidden"}, status_code=403, headers={"WWW-Authenticate": challenge}
            )
        self.records.resource_statuses.append(200)
        if self._inner is not None:
            return None
        return JSONResponse({"ok": True, "scope": access.scope, "client_id": access.client_id})

    def _resource_metadata(self) -> Response:
        body: dict[str, Any] = {
            "resource": self.options.resource_override or self.mcp_url,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
        }
        if self.options.scopes_supported is not None:
            body["scopes_supported"] = self.options.scopes_supported
        return JSONResponse(body)

    # ------------------------------------------------------------------ authorization server

    def _server_metadata(self) -> dict[str, Any]:
        opts, base = self.options, self.issuer
        body: dict[str, Any] = {
            "issuer": opts.issuer_claimed or base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
        }
        if opts.registration:
            body["registration_endpoint"] = f"{base}/register"
        if opts.code_challenge_methods is not None:
            body["code_challenge_methods_supported"] = opts.code_challenge_methods
        if opts.token_auth_methods is not None:
            body["token_endpoint_auth_methods_supported"] = opts.token_auth_methods
        if opts.send_iss:
            body["authorization_response_iss_parameter_supported"] = True
        return body

    def _redirect_allowed(self, client: _Client, redirect_uri: str) -> bool:
        if not client.preregistered:
            return redirect_uri in client.redirect_uris
        # RFC 8252 §7.3: any port of a loopback redirect URI.
        parts = urlsplit(redirect_uri)
        return parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == "/callback"

    def _authorize(self, request: Request) -> Response:
        params = dict(request.query_params)
        self.records.authorizations.append(params)
        client = self._clients.get(params.get("client_id", ""))
        redirect_uri = params.get("redirect_uri", "")
        if client is None or not self._redirect_allowed(client, redirect_uri):
            return HTMLResponse("<h1>Unknown client or redirect URI</h1>", status_code=400)
        problem = None
        if params.get("response_type") != "code":
            problem = "unsupported_response_type"
        elif params.get("code_challenge_method") != "S256" or not params.get("code_challenge"):
            problem = "invalid_request"
        elif not params.get("resource"):
            problem = "invalid_target"
        state = (
            self.options.state_override
            if self.options.state_override is not None
            else params.get("state", "")
        )
        if problem is not None:
            return RedirectResponse(f"{redirect_uri}?{urlencode({'error': problem, 'state': state})}", 302)
        if not self.options.auto_approve:
            return HTMLResponse("<form><h1>Sign in</h1><input name='user'></form>")
        requested = params.get("scope", "").split()
        grantable = self.options.grantable_scopes
        granted = [s for s in requested if grantable is None or s in grantable]
        code = secrets.token_urlsafe(24)
        self.issued.append(("code", code))
        with self._lock:
            self._codes[code] = _Grant(
                client.client_id,
                redirect_uri,
                params["code_challenge"],
                params["resource"],
                " ".join(granted),
            )
        answer = {"code": code, "state": state}
        if self.options.send_iss:
            answer["iss"] = self.issuer
        return RedirectResponse(f"{redirect_uri}?{urlencode(answer)}", 302)

    def _authenticate(self, request: Request, form: dict[str, str]) -> tuple[_Client | None, str]:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            decoded = base64.b64decode(header[6:]).decode()
            client_id, _, secret = decoded.partition(":")
            client = self._clients.get(unquote(client_id))
            ok = client is not None and client.method == "client_secret_basic" and "client_secret" not in form
            return (client if ok and client and client.client_secret == unquote(secret) else None), "basic"
        client = self._clients.get(form.get("client_id", ""))
        if "client_secret" in form:
            ok = client is not None and client.method == "client_secret_post"
            return (
                client if ok and client and client.client_secret == form["client_secret"] else None
            ), "post"
        return (client if client is not None and client.method == "none" else None), "none"

    async def _token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        client, how = self._authenticate(request, form)

        def refuse(error: str, status: int = 400) -> Response:
            self.records.token_requests.append(TokenRequest(form, how, status))
            return JSONResponse(
                {"error": error, "error_description": f"refused: {error}"}, status_code=status
            )

        if client is None:
            return refuse("invalid_client", 401)
        resource = form.get("resource")
        if not resource:
            return refuse("invalid_target")
        if form.get("grant_type") == "authorization_code":
            with self._lock:
                grant = self._codes.pop(form.get("code", ""), None)
            if (
                grant is None
                or grant.client_id != client.client_id
                or grant.redirect_uri != form.get("redirect_uri")
            ):
                return refuse("invalid_grant")
            if s256(form.get("code_verifier", "")) != grant.challenge:
                return refuse("invalid_grant")
            if resource != grant.resource:
                return refuse("invalid_target")
            scope = grant.scope
        elif form.get("grant_type") == "refresh_token":
            with self._lock:
                previous = self._refresh.pop(form.get("refresh_token", ""), None)
            if previous is None or previous.client_id != client.client_id:
                return refuse("invalid_grant")
            if resource != previous.resource:
                return refuse("invalid_target")
            scope = previous.scope
        else:
            return refuse("unsupported_grant_type")
        ttl = self.options.access_token_ttl
        access = secrets.token_urlsafe(32) + self.options.access_token_suffix
        self.issued.append(("access", access))
        record = _Access(client.client_id, resource, scope, time.time() + ttl if ttl is not None else None)
        body: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "scope": scope}
        if ttl is not None:
            body["expires_in"] = ttl
        with self._lock:
            self._access[access] = record
            if self.options.issue_refresh_tokens:
                refresh = secrets.token_urlsafe(32)
                self.issued.append(("refresh", refresh))
                self._refresh[refresh] = _Access(client.client_id, resource, scope, None)
                body["refresh_token"] = refresh
        self.records.token_requests.append(TokenRequest(form, how, 200))
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    async def _register(self, request: Request) -> Response:
        try:
            metadata = json.loads(await request.body())
        except ValueError:
            metadata = None
        if not isinstance(metadata, dict):
            return JSONResponse({"error": "invalid_client_metadata"}, status_code=400)
        self.records.registrations.append(metadata)
        redirect_uris = metadata.get("redirect_uris")
        if not isinstance(redirect_uris, list) or not redirect_uris:
            return JSONResponse({"error": "invalid_redirect_uri"}, status_code=400)
        supported = self.options.token_auth_methods or ["client_secret_basic"]
        method = metadata.get("token_endpoint_auth_method") or supported[0]
        if method not in supported:
            return JSONResponse({"error": "invalid_client_metadata"}, status_code=400)
        client = _Client(
            client_id=f"client-{secrets.token_hex(6)}",
            client_secret=None if method == "none" else secrets.token_urlsafe(24),
            method=method,
            redirect_uris=[str(uri) for uri in redirect_uris],
            preregistered=False,
        )
        self._clients[client.client_id] = client
        if client.client_secret is not None:
            self.issued.append(("secret", client.client_secret))
        body = {**metadata, "client_id": client.client_id, "token_endpoint_auth_method": method}
        if client.client_secret is not None:
            body["client_secret"] = client.client_secret
            expires_in = self.options.secret_expires_in
            body["client_secret_expires_at"] = 0 if expires_in is None else int(time.time()) + expires_in
        return JSONResponse(body, status_code=201)


# ---------------------------------------------------------------------- the test's side


class Browser:
    """Plays the person's browser as an authorization prompt: opens the authorization URL, and
    follows the authorization server's redirect to the loopback redirect URI. ``forge_first`` first
    sends the loopback a response with another state, as a hostile web page could."""

    def __init__(self, *, forge_first: bool = False) -> None:
        self.forge_first = forge_first
        self.urls: list[str] = []
        self.pages: list[httpx.Response] = []

    async def __call__(self, url: str) -> None:
        self.urls.append(url)
        async with httpx.AsyncClient(timeout=10) as client:
            answer = await client.get(url)
            assert answer.status_code == 302, answer.text
            location = answer.headers["location"]
            if self.forge_first:
                parts = urlsplit(location)
                forged = dict(parse_qsl(parts.query)) | {"state": "forged", "code": "forged-code"}
                self.pages.append(await client.get(parts._replace(query=urlencode(forged)).geturl()))
            self.pages.append(await client.get(location))


class RecordingKeyring(KeyringBackend):
    """A keychain in a dict that records every call, so a test can see what went where."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}
        self.calls: list[tuple[str, str, str]] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.calls.append(("get", service, username))
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.calls.append(("set", service, username))
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.calls.append(("delete", service, username))
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("no such password")
