"""The runtime's client of the backend services: Session, Policy, Workspace, Approval, Backend Tool,
Audit and Telemetry (seed 000 §3.2, §3.4, §7.5, §7.6, §9.5, §10.4, §11 "Network"; seed 001 §6.3).

One pooled ``httpx.AsyncClient`` per session (keep-alive: a task makes several calls), bearer auth,
``User-Agent: cowork-agent-runtime/<version>``, timeouts of 5 s to connect and 30 s between bytes.
Redirects are never followed, so the token only ever goes to the configured origin; for a loopback
backend the environment's proxy settings are ignored (a proxy must not see a clear-text token).

Every answer is checked *as JSON* against its ``contracts.rest`` model; one that does not fit is a
:class:`BackendError` ``INTERNAL_ERROR`` ("The Session Service answered POST /sessions unexpectedly").

Retries, with exponential backoff and full jitter (``Retry-After`` honoured on 429 and 503, capped):

==============================  ======================================================  =============
failure                         retried for                                              in the end
==============================  ======================================================  =============
connect error / connect timeout every call (the request never left)                      Unreachable
429                             every call (the server refused it unprocessed)           Unreachable
429 naming a quota              never: it frees up in minutes or hours, if ever          Rejected
read/write timeout, broken      idempotent calls only: everything but ``POST /sessions``  Unreachable
connection, 5xx
4xx whose shape is retryable    idempotent calls only (409 "being changed", a race)      Rejected
other 4xx                       never                                                    Rejected
==============================  ======================================================  =============

A quota refusal is a 429 whose error shape names the quota in ``details.quota`` (``sessionsPerUser``,
``tokensPerDay``, ``storageBytes``): its message says which limit and when to try again, and that is
what the caller gets, as :class:`BackendRejected`, rather than minutes of retries ending in "unavailable".

Idempotency: resume and cancel are idempotent on the backend; ``POST /approvals`` is idempotent by
``approvalId``; audit and telemetry batches by each envelope's ``eventId``; artifact uploads carry an
``Idempotency-Key`` (the caller's, or one generated per upload and kept across its retries), so a retry
returns the first upload instead of storing twice.
``POST /sessions`` is not: a second attempt after the first may have arrived could create a second
session, so it is retried only when the request provably never got there. Nor is a backend tool's
invocation (a remote tool may have effects), which also waits longer for its answer: the service runs a
tool for up to 120 s (§7.4), so the read timeout of that call is :data:`REMOTE_TOOL_TIMEOUT_S`.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import random as random_module
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, NoReturn, TypeVar

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from agent_runtime.agent_host.tls import tls_context
from contracts._base import WireModel
from contracts.approvals import ApprovalDecisionRecord
from contracts.errors import ErrorCode, ErrorShape
from contracts.rest.approvals import ApprovalResource
from contracts.rest.observability import AuditReceipts, TelemetryReceipt
from contracts.rest.policies import PolicyKeySet
from contracts.rest.push import SessionPushStatus
from contracts.rest.sessions import (
    CancelSessionRequest,
    CreateSessionRequest,
    CreateSessionResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionResource,
)
from contracts.rest.tools import BackendToolList, InvokeToolRequest
from contracts.rest.workspaces import ArtifactUploadRequest, ArtifactUploadResponse
from contracts.retry import RetryAfter, RetryPolicy, call_with_retries, parse_retry_after
from contracts.tools import ToolDefinition, ToolResult

from .config import BackendConfig
from .errors import BackendError, BackendRejected, BackendUnreachable, SessionGone
from .keys import keys_from_list

__all__ = [
    "DEFAULT_TIMEOUTS",
    "MAX_RESPONSE_BYTES",
    "REMOTE_TOOL_TIMEOUT_S",
    "USER_AGENT",
    "BackendClient",
    "BackendTimeouts",
]

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=WireModel)


def _version() -> str:
    try:
        return importlib.metadata.version("cowork")
    except importlib.metadata.PackageNotFoundError:
        # A frozen runtime may ship without the distribution's metadata; the backend only logs this.
        return "unknown"


USER_AGENT: Final = f"cowork-agent-runtime/{_version()}"

MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024
"""No answer of these routes comes near this (a policy bundle is a few KiB); a larger one is refused
rather than held in memory."""

REMOTE_TOOL_TIMEOUT_S: Final = 130.0
"""How long ``invoke_backend_tool`` waits for an answer: the service's 120 s budget (seed 000 §7.4),
which it enforces itself and answers as a failed ToolResult, plus room for the round trip."""

_MAX_MESSAGE_CHARS: Final = 500
_PATH_ID: Final = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,127}")
_TRANSIENT_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
_RETRY_AFTER_STATUSES: Final = frozenset({429, 503})


@dataclass(frozen=True, slots=True)
class BackendTimeouts:
    """``connect_s``: to open a connection; ``read_s``/``write_s``: the longest silence while reading
    or writing (an upload of 32 MiB writes steadily); ``pool_s``: waiting for a pooled connection."""

    connect_s: float = 5.0
    read_s: float = 30.0
    write_s: float = 30.0
    pool_s: float = 5.0

    def __post_init__(self) -> None:
        if min(self.connect_s, self.read_s, self.write_s, self.pool_s) <= 0:
            raise ValueError("timeouts must be positive")

    def as_httpx(self) -> httpx.Timeout:
        return httpx.Timeout(connect=self.connect_s, read=self.read_s, write=self.write_s, pool=self.pool_s)


DEFAULT_TIMEOUTS: Final = BackendTimeouts()


@dataclass(frozen=True, slots=True)
class _Call:
    service: str
    """Which service answers, for messages: "Session Service"."""
    method: str
    path: str
    route: str
    """The path with placeholders, for messages and logs: ``POST /sessions/{sessionId}/resume``."""
    body: bytes | None = None
    headers: Mapping[str, str] | None = None
    idempotent: bool = True
    unreachable_code: ErrorCode | None = None
    """The code of the final BackendUnreachable when not the backend's own (uploads: §11)."""
    read_timeout_s: float | None = None
    """The longest wait for the answer when not the client's ``read_s`` (a backend tool runs longer)."""


class _AttemptFailed(Exception):
    """One attempt failed in a way another attempt may not; internal to :class:`BackendClient`."""

    def __init__(
        self,
        failure: str,
        *,
        reached_server: bool,
        status: int | None = None,
        shape: ErrorShape | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(failure)
        self.failure = failure
        self.reached_server = reached_server
        self.status = status
        self.shape = shape
        self.retry_after_s = retry_after_s


class BackendClient:
    """Calls the backend services on behalf of one session. Safe for concurrent calls; ``aclose`` once.

    ``sleep``, ``random`` and ``clock`` (wall time, for an HTTP-date ``Retry-After``) are injected so
    tests control the backoff; ``max_delay_s`` caps one backoff wait and ``retry_after_cap_s`` what a
    server may ask for, so a misbehaving server cannot stall the runtime for long.
    """

    def __init__(
        self,
        config: BackendConfig,
        *,
        retries: int = 3,
        base_delay_s: float = 0.25,
        transport: httpx.AsyncBaseTransport | None = None,
        timeouts: BackendTimeouts = DEFAULT_TIMEOUTS,
        max_delay_s: float = 8.0,
        retry_after_cap_s: float = 30.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        random: Callable[[], float] = random_module.random,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if retries < 0 or base_delay_s < 0 or max_delay_s < 0 or retry_after_cap_s < 0:
            raise ValueError("retries and delays must not be negative")
        self._config = config
        self._token = config.token
        self._retry = RetryPolicy(
            max_retries=retries, base_s=base_delay_s, cap_s=max_delay_s, retry_after_cap_s=retry_after_cap_s
        )
        self._sleep = sleep
        self._random = random
        self._clock = clock
        self._closed = False
        self._http = httpx.AsyncClient(
            base_url=config.url,
            headers={
                "authorization": f"Bearer {config.token}",
                "user-agent": USER_AGENT,
                "accept": "application/json",
            },
            timeout=timeouts.as_httpx(),
            # The backend (uvicorn) drops idle connections after 30 s; letting ours go sooner avoids
            # sending on a connection the server is closing at that very moment.
            limits=httpx.Limits(max_connections=8, max_keepalive_connections=4, keepalive_expiry=20.0),
            follow_redirects=False,
            trust_env=not config.loopback,
            verify=tls_context(config.url, trust_env=not config.loopback),
            transport=transport,
        )

    @property
    def config(self) -> BackendConfig:
        return self._config

    async def __aenter__(self) -> BackendClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the pooled connections; later calls raise ``BackendError``. Idempotent."""
        self._closed = True
        await self._http.aclose()

    # ------------------------------------------------------------------------------- Session Service

    async def create_session(self, request: CreateSessionRequest) -> CreateSessionResponse:
        """``POST /sessions`` (seed 000 §3.2 step 2). An incompatible client is an answer, not an error:
        ``compatibilityStatus == "incompatible"`` and no session (the caller must not proceed)."""
        return await self._json(
            _Call(
                "Session Service",
                "POST",
                "/sessions",
                "POST /sessions",
                body=_body(request),
                idempotent=False,
            ),
            CreateSessionResponse,
        )

    async def resume_session(self, session_id: str, request: ResumeSessionRequest) -> ResumeSessionResponse:
        """``POST /sessions/{id}/resume`` (seed 000 §9.5): a refreshed, re-signed bundle.

        :class:`SessionGone` when the session ended or is past its resume window (its ``reason``).
        """
        path = f"/sessions/{_segment(session_id, 'sessionId')}/resume"
        return await self._json(
            _Call("Session Service", "POST", path, "POST /sessions/{sessionId}/resume", body=_body(request)),
            ResumeSessionResponse,
        )

    async def cancel_session(self, session_id: str, request: CancelSessionRequest) -> SessionResource:
        """``POST /sessions/{id}/cancel`` (seed 000 §3.4 step 5); an ended session comes back unchanged."""
        path = f"/sessions/{_segment(session_id, 'sessionId')}/cancel"
        return await self._json(
            _Call("Session Service", "POST", path, "POST /sessions/{sessionId}/cancel", body=_body(request)),
            SessionResource,
        )

    async def get_session(self, session_id: str) -> SessionResource:
        """``GET /sessions/{id}``: status, expiry, whether it can still be resumed."""
        path = f"/sessions/{_segment(session_id, 'sessionId')}"
        return await self._json(
            _Call("Session Service", "GET", path, "GET /sessions/{sessionId}"), SessionResource
        )

    async def session_push_status(self, session_id: str) -> SessionPushStatus:
        """``GET /sessions/{id}/policy-status``: a changed or revoked policy, an administrator's stop —
        what the server push says, for a runtime that cannot keep its WebSocket open
        (:mod:`.push`)."""
        path = f"/sessions/{_segment(session_id, 'sessionId')}/policy-status"
        return await self._json(
            _Call("Session Service", "GET", path, "GET /sessions/{sessionId}/policy-status"),
            SessionPushStatus,
        )

    # -------------------------------------------------------------------------------- Policy Service

    async def policy_keys(self) -> dict[str, Ed25519PublicKey]:
        """``GET /policy/keys``: the keys that sign policy bundles, by key id (possibly none)."""
        call = _Call("Policy Service", "GET", "/policy/keys", "GET /policy/keys")
        key_set = await self._json(call, PolicyKeySet)
        try:
            return keys_from_list(key_set.keys)
        except ValueError:
            raise _unexpected(call, 200, "a published key is not an Ed25519 public key") from None

    # ----------------------------------------------------------------------------- Workspace Service

    async def upload_artifact(
        self, request: ArtifactUploadRequest, *, idempotency_key: str | None = None
    ) -> ArtifactUploadResponse:
        """``POST /workspaces/{id}/artifacts`` (seed 000 §7.5). ``idempotency_key`` makes a retry —
        ours or the caller's, later — return the first upload; one is generated when absent.

        The caller treats failure as best-effort (§7.5): :class:`BackendUnreachable` has the code
        ``WORKSPACE_UPLOAD_FAILED`` so it can warn the desktop and carry on (§11).
        """
        key = idempotency_key if idempotency_key is not None else uuid.uuid4().hex
        if not (1 <= len(key) <= 255 and key.isascii() and key.isprintable() and " " not in key):
            raise BackendError(
                ErrorCode.INVALID_REQUEST,
                "idempotency_key must be 1-255 visible ASCII characters",
                details={"field": "idempotencyKey"},
            )
        path = f"/workspaces/{_segment(request.workspace_id, 'workspaceId')}/artifacts"
        return await self._json(
            _Call(
                "Workspace Service",
                "POST",
                path,
                "POST /workspaces/{workspaceId}/artifacts",
                body=_body(request),
                headers={"idempotency-key": key},
                unreachable_code=ErrorCode.WORKSPACE_UPLOAD_FAILED,
            ),
            ArtifactUploadResponse,
        )

    # ------------------------------------------------------------------------------ Approval Service

    async def record_approval(self, record: ApprovalDecisionRecord) -> ApprovalResource:
        """``POST /approvals`` (seed 000 §10.4): idempotent by ``approvalId``, so retried safely; a
        *different* decision under a used ``approvalId`` is a :class:`BackendRejected` (409)."""
        return await self._json(
            _Call("Approval Service", "POST", "/approvals", "POST /approvals", body=_body(record)),
            ApprovalResource,
        )

    # ------------------------------------------------------------------ Audit and Telemetry Services

    async def record_audit_events(self, encoded: Sequence[bytes]) -> AuditReceipts:
        """``POST /audit/events`` with 1-500 §6.3 envelopes, each already encoded as a JSON object
        (the event spool holds them so). Idempotent by ``eventId``, so retried like a read."""
        return await self._json(
            _Call("Audit Service", "POST", "/audit/events", "POST /audit/events", body=_array(encoded)),
            AuditReceipts,
        )

    async def record_telemetry_events(self, encoded: Sequence[bytes]) -> TelemetryReceipt:
        """``POST /telemetry/events``, as :meth:`record_audit_events`; the receipt may say the tenant's
        ``tokensPerDay`` is used up (``quotaExceeded``)."""
        return await self._json(
            _Call(
                "Telemetry Service",
                "POST",
                "/telemetry/events",
                "POST /telemetry/events",
                body=_array(encoded),
            ),
            TelemetryReceipt,
        )

    # -------------------------------------------------------------------------- Backend Tool Service

    async def list_backend_tools(self) -> list[ToolDefinition]:
        """``GET /tools`` (seed 000 §7.6): the remote tools this tenant's policy allows (the bundle's
        ``BackendTool.Invoke`` ``allowedToolNames``), as the LLM is to be shown them."""
        listing = await self._json(
            _Call("Backend Tool Service", "GET", "/tools", "GET /tools"), BackendToolList
        )
        return listing.tools

    async def invoke_backend_tool(
        self, tool_name: str, request: InvokeToolRequest, *, timeout_s: float = REMOTE_TOOL_TIMEOUT_S
    ) -> ToolResult:
        """``POST /tools/{toolName}/invoke`` (seed 000 §7.6): a standard :class:`ToolResult`, to be handled
        like a local tool's — ``failed`` (``TOOL_EXECUTION_TIMEOUT`` past the service's 120 s budget)
        is an answer, not an error. Refusals are :class:`BackendRejected`: 400 ``INVALID_REQUEST``
        (arguments), 403 ``CAPABILITY_DENIED`` (not allowed), 404 ``TOOL_NOT_FOUND`` or
        ``SESSION_NOT_FOUND``. Sent again only if the first attempt provably never arrived.

        A result for another call, or with an artifact naming a local file (``dataPath``: the backend
        has no files here; its artifacts carry ``text``), is refused as an unexpected answer."""
        route = "POST /tools/{toolName}/invoke"
        call = _Call(
            "Backend Tool Service",
            "POST",
            f"/tools/{_segment(tool_name, 'toolName')}/invoke",
            route,
            body=_body(request),
            idempotent=False,
            read_timeout_s=timeout_s,
        )
        result = await self._json(call, ToolResult)
        ids = (result.tool_name, result.session_id, result.task_id, result.step_id)
        if ids != (tool_name, request.session_id, request.task_id, request.step_id):
            raise _unexpected(call, 200, "the result is for another tool call")
        if any(artifact.data_path is not None for artifact in result.artifacts):
            raise _unexpected(call, 200, "an artifact names a local file")
        return result

    # ------------------------------------------------------------------------------------- machinery

    async def _json(self, call: _Call, model: type[M]) -> M:
        status, content = await self._send(call)
        try:
            return model.model_validate_json(content)
        except ValidationError as exc:
            raise _unexpected(call, status, "the answer does not fit the contract") from exc

    async def _send(self, call: _Call) -> tuple[int, bytes]:
        """The status and body of the first 2xx answer; raises for everything else (see the table)."""
        if self._closed:
            raise BackendError(ErrorCode.INTERNAL_ERROR, "The backend client is closed")

        def retry_on(error: Exception, attempts: int) -> RetryAfter | None:
            if not isinstance(error, _AttemptFailed):
                return None  # a BackendError already: final
            if error.reached_server and not call.idempotent:
                give_up(error, attempts)  # it may have been handled: sending it again could repeat it
            return RetryAfter(error.retry_after_s)

        def give_up(error: Exception, attempts: int) -> NoReturn:
            assert isinstance(error, _AttemptFailed)
            raise self._final_error(call, error, attempts) from error.__cause__

        def before_wait(attempts: int, delay: float, error: Exception) -> None:
            assert isinstance(error, _AttemptFailed)
            logger.info(
                "%s failed (%s, attempt %d); retrying in %.2f s",
                call.route,
                error.failure if error.status is None else f"HTTP {error.status}",
                attempts,
                delay,
            )

        return await call_with_retries(
            lambda: self._attempt(call),
            self._retry,
            retry_on=retry_on,
            give_up=give_up,
            before_wait=before_wait,
            sleep=self._sleep,
            random=self._random,
        )

    async def _attempt(self, call: _Call) -> tuple[int, bytes]:
        headers = dict(call.headers or {})
        if call.body is not None:
            headers["content-type"] = "application/json"
        timeout = self._http.timeout
        if call.read_timeout_s is not None:
            timeout = httpx.Timeout(
                connect=timeout.connect, read=call.read_timeout_s, write=timeout.write, pool=timeout.pool
            )
        request = self._http.build_request(
            call.method, call.path, content=call.body, headers=headers, timeout=timeout
        )
        try:
            response = await self._http.send(request, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise _AttemptFailed("connect", reached_server=False) from exc
        except httpx.TimeoutException as exc:
            raise _AttemptFailed("timeout", reached_server=True) from exc
        except httpx.TransportError as exc:
            # A broken connection or something that is not HTTP: the request may have been handled.
            raise _AttemptFailed("disconnected", reached_server=True) from exc
        except RuntimeError as exc:  # httpx: the client was closed while this call waited
            raise BackendError(ErrorCode.INTERNAL_ERROR, "The backend client is closed") from exc
        try:
            content = await self._read(call, response)
        finally:
            await response.aclose()
        status = response.status_code
        if 200 <= status < 300:
            return status, content
        if status < 400:
            raise _unexpected(call, status, "a redirect or an informational answer")
        shape = self._error_shape(status, content)
        retry_after = (
            parse_retry_after(response.headers, self._clock) if status in _RETRY_AFTER_STATUSES else None
        )
        if status == 429 and isinstance(shape.details.get("quota"), str):
            raise self._rejected(shape, status)
        if status in _TRANSIENT_STATUSES or status > 500:
            # A 429 is refused before any work is done, so even POST /sessions may send it again.
            raise _AttemptFailed(
                "status", reached_server=status != 429, status=status, shape=shape, retry_after_s=retry_after
            )
        if shape.retryable and call.idempotent:
            raise _AttemptFailed("status", reached_server=True, status=status, shape=shape)
        raise self._rejected(shape, status)

    async def _read(self, call: _Call, response: httpx.Response) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
            raise _unexpected(call, response.status_code, "the answer is too large")
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise _unexpected(call, response.status_code, "the answer is too large")
                chunks.append(chunk)
        except httpx.TimeoutException as exc:
            raise _AttemptFailed("timeout", reached_server=True) from exc
        except httpx.DecodingError as exc:
            raise _unexpected(call, response.status_code, "the answer's encoding is broken") from exc
        except httpx.TransportError as exc:
            raise _AttemptFailed("disconnected", reached_server=True) from exc
        return b"".join(chunks)

    def _error_shape(self, status: int, content: bytes) -> ErrorShape:
        """The backend's error shape, made safe to show: one line, bounded, never the token. An answer
        without one (a proxy's HTML page) gets a shape from its status."""
        try:
            shape = ErrorShape.model_validate_json(content)
        except ValidationError:
            refused = f"The request was refused (HTTP {status})"
            shape = ErrorShape(code=_code_for_status(status), message=refused)
        message = " ".join(self._scrub(shape.message).split())[:_MAX_MESSAGE_CHARS]
        scrubbed = self._scrub(shape.details)
        details = scrubbed if isinstance(scrubbed, dict) else {}
        code = ErrorCode.UNAUTHORIZED if status == 401 else shape.code
        return ErrorShape(
            code=code, message=message or f"HTTP {status}", retryable=shape.retryable, details=details
        )

    def _scrub(self, value: Any) -> Any:
        # The backend never echoes a token, but what answers at this URL is not necessarily the backend.
        if isinstance(value, str):
            return value.replace(self._token, "[redacted]")
        if isinstance(value, dict):
            return {self._scrub(k): self._scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._scrub(v) for v in value]
        return value

    def _rejected(self, shape: ErrorShape, status: int) -> BackendRejected:
        if status == 410 and shape.code is ErrorCode.SESSION_EXPIRED:
            return SessionGone(shape, status=status)
        return BackendRejected(shape, status=status)

    def _final_error(self, call: _Call, failure: _AttemptFailed, attempts: int) -> BackendError:
        rejected = failure.status is not None and failure.status < 500 and failure.status != 429
        if rejected and failure.shape is not None and failure.status is not None:
            return self._rejected(failure.shape, failure.status)
        where = f"The {call.service} at {self._config.url}"
        plural = "attempt" if attempts == 1 else "attempts"
        explanations = {
            "connect": "could not be reached (connection refused or timed out)",
            "timeout": "did not answer in time",
            "disconnected": "closed the connection without a proper answer",
        }
        if failure.status is not None:
            message = f"{where} is unavailable: it answered HTTP {failure.status}"
        else:
            message = f"{where} {explanations[failure.failure]}"
        details: dict[str, Any] = {
            "service": call.service,
            "url": self._config.url,
            "route": call.route,
            "attempts": attempts,
            "failure": failure.failure,
        }
        if failure.status is not None:
            details["status"] = failure.status
        code = call.unreachable_code or (failure.shape.code if failure.shape else ErrorCode.INTERNAL_ERROR)
        return BackendUnreachable(code, f"{message} ({attempts} {plural})", details=details)


def _body(model: WireModel) -> bytes:
    return model.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8")


def _array(encoded: Sequence[bytes]) -> bytes:
    return b"[" + b",".join(encoded) + b"]"


def _segment(value: str, field: str) -> str:
    """An ID as one path segment. IDs also come from checkpoint files on disk, so only RFC 3986
    unreserved characters are accepted and no leading dot: the server decodes ``%2F`` before routing,
    so escaping alone would not stop ``../`` from steering the request to another route."""
    if not isinstance(value, str) or not _PATH_ID.fullmatch(value):
        raise BackendError(ErrorCode.INVALID_REQUEST, f"{field} is not a valid ID", details={"field": field})
    return value


def _code_for_status(status: int) -> ErrorCode:
    return {
        401: ErrorCode.UNAUTHORIZED,
        403: ErrorCode.PERMISSION_DENIED,
        429: ErrorCode.RATE_LIMITED,
    }.get(status, ErrorCode.INTERNAL_ERROR if status >= 500 else ErrorCode.INVALID_REQUEST)


def _unexpected(call: _Call, status: int, problem: str) -> BackendError:
    return BackendError(
        ErrorCode.INTERNAL_ERROR,
        f"The {call.service} answered {call.route} unexpectedly",
        details={"service": call.service, "route": call.route, "status": status, "problem": problem},
    )
