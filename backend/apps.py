"""The app factory: one FastAPI app per service, or several (all seven: the combined app of local mode).

Services reach each other through their ports: in one app the other service object itself; across apps
an HTTP adapter to ``peers_url`` (:mod:`backend.peers`), the base URL under which the other services'
routes are served (one gateway, or the combined app).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from fastapi import APIRouter, FastAPI
from pydantic import BaseModel
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp

from backend.approval import api as approval_api
from backend.approval.service import ApprovalService
from backend.audit import api as audit_api
from backend.audit.service import AuditService
from backend.common.admission import FairAdmission
from backend.common.auth import Principal, TokenVerifier
from backend.common.clock import Clock, SystemClock
from backend.common.handlers import ErrorShapeMiddleware
from backend.common.openapi import install_openapi
from backend.common.quota_config import QuotaDirectory
from backend.common.quotas import Quotas
from backend.common.runner import Runner
from backend.common.security import Authenticator
from backend.common.settings import Settings
from backend.peers import (
    HttpPolicyProvider,
    HttpSessionDirectory,
    HttpWorkspaceResolver,
    HttpWorkspaceSearcher,
    ServiceClient,
)
from backend.policy import api as policy_api
from backend.policy.config import PolicyDirectory, builtin_policy
from backend.policy.service import PolicyService, tenant_policy
from backend.session import api as session_api
from backend.session import push_api
from backend.session.compatibility import CompatibilityChecker
from backend.session.ports import PolicyProvider, PolicyStanding
from backend.session.push import PushSettings, SessionPush
from backend.session.service import SessionService
from backend.storage import Stores
from backend.telemetry import api as telemetry_api
from backend.telemetry.export import EventExporter, OtlpLogExporter, logs_endpoint
from backend.telemetry.service import TelemetryService
from backend.tools import api as tools_api
from backend.tools.ports import WorkspaceSearcher
from backend.tools.service import ToolService
from backend.tools.web_fetch import WebFetch
from backend.tools.workspace_search import WorkspaceSearch
from backend.workspace import api as workspace_api
from backend.workspace.service import WorkspaceService
from contracts.enums import Capability, WorkspaceScope
from contracts.rest.workspaces import WorkspaceResource

__all__ = ["SERVICES", "Backend", "BackendApp", "create_app"]

SERVICES = ("session", "policy", "workspace", "approval", "audit", "telemetry", "tools")
VERSION = "0.1.0"


class BackendApp(FastAPI):
    """FastAPI with the middleware this backend needs: :class:`FairAdmission` (requests start in
    arrival order) around :class:`ErrorShapeMiddleware` (every exception answered in the error shape).

    FastAPI's default stack is five layers around every request — Starlette's server-error and
    exception middlewares, FastAPI's telemetry, body-limit and exit-stack middlewares — and what this
    backend uses of them, exceptions answered in the error shape and the request handler's exit stack,
    the error-shape middleware does (bodies are bounded by :mod:`backend.common.body` itself). That
    saves little per request (10-20 µs measured on a trivial route), but every request pays it, and
    there is one place where errors become answers. Middleware added with ``add_middleware`` runs
    inside both; exception handlers are not consulted (the answers are
    :func:`backend.common.handlers.error_answer`'s).
    """

    def build_middleware_stack(self) -> ASGIApp:
        app: ASGIApp = self.router
        for cls, args, kwargs in reversed(self.user_middleware):
            app = cls(app, *args, **kwargs)
        return FairAdmission(ErrorShapeMiddleware(app))


@dataclass
class Backend:
    """The service objects behind an app (for maintenance commands and tests)."""

    sessions: SessionService | None = None
    policy: PolicyService | None = None
    workspaces: WorkspaceService | None = None
    approvals: ApprovalService | None = None
    audit: AuditService | None = None
    telemetry: TelemetryService | None = None
    tools: ToolService | None = None
    peer_clients: list[ServiceClient] = field(default_factory=list)

    def close(self) -> None:
        for client in self.peer_clients:
            client.close()
        if self.telemetry is not None:
            self.telemetry.close()


def create_app(
    stores: Stores,
    *,
    verifier: TokenVerifier,
    policy_key: Ed25519PrivateKey | None = None,
    retired_policy_keys: Iterable[Ed25519PublicKey] = (),
    services: Iterable[str] = SERVICES,
    settings: Settings | None = None,
    policies: PolicyDirectory | None = None,
    clock: Clock | None = None,
    peers_url: str | None = None,
    quotas: QuotaDirectory | None = None,
    exporter: EventExporter | None = None,
    push: PushSettings | None = None,
    websockets: bool = True,
) -> FastAPI:
    """An app serving ``services`` over ``stores``. ``app.state.backend`` holds the service objects.

    ``quotas``: the tenants' limits (default: ``<config dir>/quotas`` of ``policies``; none without a
    config directory); a quota file that cannot be used is a ValueError here. ``exporter``: where
    telemetry goes besides the store (default: the OTLP collector of ``settings.otlp_endpoint``).
    ``push``: the Session Service's push intervals; ``websockets`` False serves the push by polling
    only (``GET /sessions/{id}/policy-status``), for a server behind a proxy that does not pass them."""
    wanted = tuple(dict.fromkeys(services))
    unknown = sorted(set(wanted) - set(SERVICES))
    if unknown:
        raise ValueError(f"unknown service: {unknown[0]}")
    settings = settings or Settings()
    clock = clock or SystemClock()
    policies = policies or PolicyDirectory(
        None,
        builtin_policy(bundle_ttl=settings.bundle_ttl, max_artifact_bytes=settings.limits.max_artifact_bytes),
    )
    quota_directory = quotas if quotas is not None else QuotaDirectory(policies.directory)
    problems = quota_directory.check()
    if problems:
        raise ValueError("quota configuration: " + "; ".join(problems))
    quota_guard = Quotas(quota_directory, stores.usage, clock)
    runner = Runner(inline=not stores.blocking)
    authenticate = Authenticator(verifier)
    limits = settings.limits
    backend = Backend()
    peer: ServiceClient | None = None

    def remote() -> ServiceClient:
        nonlocal peer
        if peer is None:
            if peers_url is None:
                raise ValueError(
                    f"serving {', '.join(wanted)} alone needs the URL of the other services (peers_url)"
                )
            peer = ServiceClient(peers_url)
            backend.peer_clients.append(peer)
        return peer

    app = BackendApp(
        title="Cowork backend",
        version=VERSION,
        description="Session, Policy, Workspace, Approval, Audit, Telemetry and Backend Tool services "
        "(seed 001 §1). "
        "Errors are always the error shape {code, message, retryable, details}.",
        separate_input_output_schemas=False,
        redoc_url=None,
        # FastAPI's native OpenTelemetry instrumentation asks the global providers on every request
        # whether to trace it (about 10 µs); the backend reports through its own JSON logs and its
        # Telemetry Service.
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    body_models: list[type[BaseModel]] = []

    # The session and workspace services need each other (workspaces for new sessions; session
    # ownership for uploads), so in one app each is reached through a forward bound below.
    session_directory = _SessionDirectory()
    workspace_resolver = _WorkspaceResolver()

    if "policy" in wanted:
        if policy_key is None:
            raise ValueError("the Policy Service needs its signing key")
        backend.policy = PolicyService(policies, policy_key, clock, retired_keys=tuple(retired_policy_keys))
        _add_routes(app, policy_api.router(backend.policy, authenticate, runner, limits.max_json_body_bytes))
        body_models += policy_api.BODY_MODELS
    if "session" in wanted:
        policy_provider: PolicyProvider = backend.policy or HttpPolicyProvider(remote())
        policy_status = _PolicyStatus(policies)
        backend.sessions = SessionService(
            stores.sessions,
            policy_provider,
            workspace_resolver,
            CompatibilityChecker(settings.host_versions, settings.desktop_versions),
            clock,
            settings,
            quotas=quota_guard,
            policy_status=policy_status,
        )
        session_directory.target = backend.sessions
        _add_routes(
            app, session_api.router(backend.sessions, authenticate, runner, limits.max_json_body_bytes)
        )
        body_models += session_api.BODY_MODELS
        pushing = SessionPush(backend.sessions, stores.sessions, policy_status, runner, push)
        _add_routes(
            app,
            push_api.router(
                backend.sessions,
                pushing,
                authenticate,
                verifier,
                runner,
                limits.max_json_body_bytes,
                websockets=websockets,
            ),
        )
        body_models += push_api.BODY_MODELS
    elif {"workspace", "approval", "tools"} & set(wanted):
        session_directory.target = HttpSessionDirectory(remote())
    if "workspace" in wanted:
        backend.workspaces = WorkspaceService(
            stores.workspaces, stores.content, session_directory, clock, settings, quotas=quota_guard
        )
        workspace_resolver.target = backend.workspaces
        _add_routes(app, workspace_api.router(backend.workspaces, authenticate, runner, limits))
        body_models += workspace_api.BODY_MODELS
    elif "session" in wanted:
        workspace_resolver.target = HttpWorkspaceResolver(remote())
    if "approval" in wanted:
        backend.approvals = ApprovalService(
            stores.approvals, session_directory, clock, settings.client_clock_skew
        )
        _add_routes(
            app, approval_api.router(backend.approvals, authenticate, runner, limits.max_json_body_bytes)
        )
        body_models += approval_api.BODY_MODELS
    if "audit" in wanted:
        backend.audit = AuditService(stores.audit, clock)
        _add_routes(app, audit_api.router(backend.audit, authenticate, runner, limits))
        body_models += audit_api.BODY_MODELS
    if "telemetry" in wanted:
        if exporter is None and settings.otlp_endpoint is not None:
            exporter = OtlpLogExporter(logs_endpoint(settings.otlp_endpoint))
        backend.telemetry = TelemetryService(
            stores.telemetry, clock, settings, quotas=quota_guard, exporter=exporter
        )
        _add_routes(app, telemetry_api.router(backend.telemetry, authenticate, runner, limits))
        body_models += telemetry_api.BODY_MODELS

    if "tools" in wanted:
        searcher: WorkspaceSearcher = backend.workspaces or HttpWorkspaceSearcher(remote())
        backend.tools = ToolService(
            [WorkspaceSearch(searcher, runner), WebFetch(allow_loopback=settings.web_fetch_allow_loopback)],
            _PolicyToolAllowlist(policies),
            session_directory,
            runner,
            timeout=settings.tool_timeout,
        )
        _add_routes(app, tools_api.router(backend.tools, authenticate, limits.max_json_body_bytes))
        body_models += tools_api.BODY_MODELS

    @app.get("/health", include_in_schema=False)
    async def health() -> Response:
        return JSONResponse({"status": "ok", "services": list(wanted)})

    install_openapi(app, body_models)
    app.state.backend = backend
    return app


def _add_routes(app: FastAPI, router: APIRouter) -> None:
    """The router's routes become the app's own, as ``include_router`` made them before FastAPI 0.16x.

    ``include_router`` now keeps each router whole and matches a request through a layer of route
    contexts built around it, twice per request: for a route of the third of six routers about 60 µs
    of the event loop's time (measured on a trivial route). These routers have no prefix, dependencies
    or settings an inclusion would have to apply; their routes already carry their tags and route class.
    """
    app.router.routes.extend(router.routes)


class _SessionDirectory:
    target: SessionService | HttpSessionDirectory | None = None

    def workspace_of(self, principal: Principal, session_id: str) -> str | None:
        assert self.target is not None, "no Session Service wired"
        return self.target.workspace_of(principal, session_id)


class _PolicyStatus:
    """The Session Service's view of the tenants' policy standing: the state files beside the policy
    files (:mod:`backend.policy.state`), which every backend process reads alike."""

    def __init__(self, policies: PolicyDirectory) -> None:
        self._states = policies.states

    def standing(self, tenant_id: str) -> PolicyStanding:
        state = self._states.read(tenant_id)
        return PolicyStanding(state.version, state.revoked, state.reason)


class _PolicyToolAllowlist:
    """The Backend Tool Service's view of the tenant's policy: its ``BackendTool.Invoke`` grant."""

    def __init__(self, policies: PolicyDirectory) -> None:
        self._policies = policies

    def allowed_tool_names(self, tenant_id: str) -> frozenset[str] | None:
        policy = tenant_policy(self._policies, tenant_id)
        for grant in policy.template.get("capabilities", []):
            if grant.get("name") == Capability.BACKEND_TOOL_INVOKE.value:
                names = grant.get("allowedToolNames")
                return None if names is None else frozenset(names)
        return frozenset()


class _WorkspaceResolver:
    target: WorkspaceService | HttpWorkspaceResolver | None = None

    def resolve(
        self, principal: Principal, scope: WorkspaceScope, local_paths: Sequence[str]
    ) -> WorkspaceResource:
        assert self.target is not None, "no Workspace Service wired"
        return self.target.resolve(principal, scope, local_paths)
