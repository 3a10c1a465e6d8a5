"""The backend client against servers that fail: closed ports, hangs, 5xx, 429, garbage, HTML, lies.

Every server here is real (loopback sockets); backoff waits are recorded by an injected ``sleep``
instead of being slept, so the tests are fast and can check exactly what was waited.
"""

from __future__ import annotations

import asyncio
import json
import socket
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from agent_runtime.agent_host.services import (
    USER_AGENT,
    BackendClient,
    BackendConfig,
    BackendError,
    BackendRejected,
    BackendTimeouts,
    BackendUnreachable,
    SessionGone,
)
from contracts.approvals import ApprovalDecisionRecord
from contracts.enums import ApprovalDecision, ArtifactType, Capability, OsFamily
from contracts.errors import ErrorCode
from contracts.methods import ClientInfo
from contracts.rest.sessions import CancelSessionRequest, CreateSessionRequest, ResumeSessionRequest
from contracts.rest.workspaces import ArtifactUploadRequest

from .fakes import Reply, scripted

TOKEN = "secret-token.for-tests_only"
NOW = "2026-02-21T15:00:00Z"

SESSION = {
    "sessionId": "sess_1",
    "workspaceId": "ws_1",
    "tenantId": "local",
    "userId": "jane",
    "executionEnvironment": "desktop",
    "status": "SESSION_CANCELLED",
    "createdAt": NOW,
    "updatedAt": NOW,
    "expiresAt": NOW,
    "resumableUntil": NOW,
    "policyExpired": False,
    "resumable": False,
    "policyBundleVersion": "v1",
    "clientInfo": {"desktopAppVersion": "1.0.0", "localAgentHostVersion": "1.0.0", "osFamily": "Linux"},
    "grantedCapabilities": ["File.Read"],
}
INCOMPATIBLE = {
    "compatibilityStatus": "incompatible",
    "compatibility": {
        "localAgentHostVersion": {"version": "9", "supported": ">=0.1,<2", "status": "incompatible"}
    },
}
APPROVAL = {
    "approvalId": "appr_1",
    "sessionId": "sess_1",
    "taskId": "task_1",
    "stepId": "step_1",
    "decision": "approved",
    "decidedAt": NOW,
    "workspaceId": "ws_1",
    "recordedAt": NOW,
}
ARTIFACT = {
    "artifactId": "art_1",
    "artifactUri": "cowork://workspaces/ws_1/artifacts/art_1",
    "workspaceId": "ws_1",
    "sessionId": "sess_1",
    "taskId": "task_1",
    "stepId": "step_1",
    "artifactType": "tool_output",
    "artifactName": "out.txt",
    "contentType": "text/plain",
    "sizeBytes": 2,
    "sha256": "00",
    "createdAt": NOW,
    "updatedAt": NOW,
    "outcome": "created",
}


def ok(payload: dict[str, Any], status: int = 200, **headers: str) -> Reply:
    return Reply(status=status, body=json.dumps(payload).encode(), headers=headers)


def error(status: int, code: str, message: str = "no", **extra: Any) -> Reply:
    shape = {"code": code, "message": message, "retryable": False, "details": {}, **extra}
    return Reply(status=status, body=json.dumps(shape).encode())


def html(status: int, body: bytes) -> Reply:
    return Reply(status=status, body=body, headers={"content-type": "text/html"})


HTML = b"<html><body><h1>502 Bad Gateway</h1></body></html>"


class Sleeps:
    def __init__(self) -> None:
        self.waited: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waited.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def client_for(url: str, sleeps: Sleeps, *, retries: int = 3, read_s: float = 30.0) -> BackendClient:
    return BackendClient(
        BackendConfig(url=url, token=TOKEN),
        retries=retries,
        base_delay_s=0.5,
        sleep=sleeps,
        random=lambda: 1.0,
        timeouts=BackendTimeouts(read_s=read_s),
    )


def create_request() -> CreateSessionRequest:
    return CreateSessionRequest(
        client_info=ClientInfo(
            desktop_app_version="1", local_agent_host_version="9", os_family=OsFamily.LINUX
        ),
        supported_capabilities=[Capability.FILE_READ],
    )


def approval() -> ApprovalDecisionRecord:
    return ApprovalDecisionRecord(
        approval_id="appr_1",
        session_id="sess_1",
        task_id="task_1",
        step_id="step_1",
        decision=ApprovalDecision.APPROVED,
        decided_at=datetime(2026, 2, 21, 15, tzinfo=UTC),
    )


def upload() -> ArtifactUploadRequest:
    return ArtifactUploadRequest(
        workspace_id="ws_1",
        session_id="sess_1",
        task_id="task_1",
        step_id="step_1",
        artifact_type=ArtifactType.TOOL_OUTPUT,
        artifact_name="out.txt",
        content_type="text/plain",
        content_base64="aGk=",
    )


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def assert_no_token(error: BaseException) -> None:
    assert isinstance(error, BackendError)
    for text in (str(error), repr(error), json.dumps(error.shape.to_wire()), error.message):
        assert TOKEN not in text


# ---------------------------------------------------------------------------------------- happy path


async def test_requests_carry_the_bearer_token_user_agent_and_json_and_share_a_connection(
    sleeps: Sleeps,
) -> None:
    with scripted(ok(SESSION)) as server:
        async with client_for(server.url, sleeps) as client:
            for _ in range(3):
                await client.get_session("sess_1")
    assert [r.path for r in server.received] == ["/sessions/sess_1"] * 3
    first = server.received[0]
    assert first.headers["authorization"] == f"Bearer {TOKEN}"
    assert first.headers["user-agent"] == USER_AGENT
    assert USER_AGENT.startswith("cowork-agent-runtime/")
    assert first.headers["accept"] == "application/json"
    assert len({r.client_port for r in server.received}) == 1  # keep-alive: one pooled connection


async def test_a_base_url_with_a_path_prefix_keeps_it(sleeps: Sleeps) -> None:
    with scripted(ok(APPROVAL, 201)) as server:
        async with client_for(server.url + "/cowork/api/", sleeps) as client:
            await client.record_approval(approval())
    assert server.received[0].path == "/cowork/api/approvals"


async def test_an_incompatible_verdict_is_returned_not_raised(sleeps: Sleeps) -> None:
    with scripted(ok(INCOMPATIBLE)) as server:
        async with client_for(server.url, sleeps) as client:
            verdict = await client.create_session(create_request())
    assert verdict.session_id is None
    assert verdict.compatibility["localAgentHostVersion"].status.value == "incompatible"


# ------------------------------------------------------------------------------------ unreachable


async def test_a_closed_port_is_unreachable_after_the_retries_in_bounded_time(
    closed_port: int, sleeps: Sleeps
) -> None:
    async with (
        asyncio.timeout(10),
        client_for(f"http://127.0.0.1:{closed_port}", sleeps, retries=2) as client,
    ):
        with pytest.raises(BackendUnreachable) as caught:
            await client.get_session("sess_1")
    error = caught.value
    assert error.retryable
    assert error.attempts == 3
    assert error.code is ErrorCode.INTERNAL_ERROR
    assert f"The Session Service at http://127.0.0.1:{closed_port} could not be reached" in error.message
    assert error.shape.details["failure"] == "connect"
    assert sleeps.waited == [0.5, 1.0]  # exponential: base, base * 2 (jitter pinned to its ceiling)
    assert_no_token(error)


async def test_creating_a_session_is_retried_when_the_request_never_left(
    closed_port: int, sleeps: Sleeps
) -> None:
    async with client_for(f"http://127.0.0.1:{closed_port}", sleeps, retries=3) as client:
        with pytest.raises(BackendUnreachable) as caught:
            await client.create_session(create_request())
    assert caught.value.attempts == 4
    assert len(sleeps.waited) == 3


async def test_jittered_backoff_is_capped(closed_port: int) -> None:
    sleeps = Sleeps()
    client = BackendClient(
        BackendConfig(url=f"http://127.0.0.1:{closed_port}", token=TOKEN),
        retries=6,
        base_delay_s=1.0,
        max_delay_s=3.0,
        sleep=sleeps,
        random=lambda: 0.5,
    )
    async with client:
        with pytest.raises(BackendUnreachable):
            await client.get_session("sess_1")
    assert sleeps.waited == [0.5, 1.0, 1.5, 1.5, 1.5, 1.5]


async def test_a_create_that_times_out_is_not_sent_twice(sleeps: Sleeps) -> None:
    with scripted(Reply(hang=True)) as server:
        async with client_for(server.url, sleeps, read_s=0.2) as client:
            with pytest.raises(BackendUnreachable) as caught:
                await client.create_session(create_request())
        assert len(server.received) == 1
    assert caught.value.attempts == 1
    assert caught.value.shape.details["failure"] == "timeout"
    assert "did not answer in time" in caught.value.message
    assert sleeps.waited == []


async def test_a_read_that_times_out_is_retried(sleeps: Sleeps) -> None:
    with scripted(Reply(hang=True), Reply(hang=True), ok(SESSION)) as server:
        async with client_for(server.url, sleeps, read_s=0.2) as client:
            session = await client.get_session("sess_1")
        assert len(server.received) == 3
    assert session.session_id == "sess_1"


async def test_a_500_then_201_records_the_approval(sleeps: Sleeps) -> None:
    with scripted(error(500, "INTERNAL_ERROR"), ok(APPROVAL, 201)) as server:
        async with client_for(server.url, sleeps) as client:
            recorded = await client.record_approval(approval())
        assert len(server.received) == 2
        assert server.received[0].body == server.received[1].body
    assert recorded.approval_id == "appr_1"
    assert sleeps.waited == [0.5]


async def test_a_500_on_create_is_not_retried(sleeps: Sleeps) -> None:
    with scripted(error(500, "INTERNAL_ERROR"), ok(INCOMPATIBLE)) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendUnreachable) as caught:
                await client.create_session(create_request())
        assert len(server.received) == 1
    assert caught.value.shape.details["status"] == 500
    assert "unavailable: it answered HTTP 500" in caught.value.message


async def test_an_upload_keeps_its_idempotency_key_across_retries(sleeps: Sleeps) -> None:
    with scripted(
        Reply(status=502, body=HTML, headers={"content-type": "text/html"}), ok(ARTIFACT, 201)
    ) as server:
        async with client_for(server.url, sleeps) as client:
            stored = await client.upload_artifact(upload())
            await client.upload_artifact(upload(), idempotency_key="caller-key-1")
    keys = [r.headers["idempotency-key"] for r in server.received]
    assert len(keys) == 3
    assert keys[0] == keys[1]
    assert keys[2] == "caller-key-1"
    assert server.received[0].path == "/workspaces/ws_1/artifacts"
    assert stored.artifact_id == "art_1"


async def test_an_upload_that_keeps_failing_is_a_workspace_upload_failure(sleeps: Sleeps) -> None:
    with scripted(error(503, "INTERNAL_ERROR")) as server:
        async with client_for(server.url, sleeps, retries=1) as client:
            with pytest.raises(BackendUnreachable) as caught:
                await client.upload_artifact(upload())
    assert caught.value.code is ErrorCode.WORKSPACE_UPLOAD_FAILED
    assert caught.value.retryable
    assert "Workspace Service" in caught.value.message


async def test_a_bad_idempotency_key_is_refused_before_sending(sleeps: Sleeps) -> None:
    with scripted(ok(ARTIFACT, 201)) as server:
        async with client_for(server.url, sleeps) as client:
            for key in ("", "has space", "new\nline", "k" * 256, "ünïcode"):
                with pytest.raises(BackendError) as caught:
                    await client.upload_artifact(upload(), idempotency_key=key)
                assert caught.value.code is ErrorCode.INVALID_REQUEST
        assert server.received == []


async def test_retry_after_is_honoured_on_503_and_429_and_capped(sleeps: Sleeps) -> None:
    replies = [
        Reply(status=503, body=b"{}", headers={"retry-after": "2"}),
        Reply(status=429, body=b"{}", headers={"retry-after": "100000"}),
        ok(SESSION),
    ]
    with scripted(*replies) as server:
        client = BackendClient(
            BackendConfig(url=server.url, token=TOKEN), sleep=sleeps, retry_after_cap_s=30.0
        )
        async with client:
            await client.get_session("sess_1")
    assert sleeps.waited == [2.0, 30.0]


async def test_a_429_on_create_is_retried_because_nothing_was_done(sleeps: Sleeps) -> None:
    with scripted(error(429, "RATE_LIMITED"), ok(INCOMPATIBLE)) as server:
        async with client_for(server.url, sleeps) as client:
            await client.create_session(create_request())
        assert len(server.received) == 2


async def test_rate_limiting_that_never_ends_is_unreachable_with_rate_limited(sleeps: Sleeps) -> None:
    with scripted(error(429, "RATE_LIMITED")) as server:
        async with client_for(server.url, sleeps, retries=2) as client:
            with pytest.raises(BackendUnreachable) as caught:
                await client.get_session("sess_1")
        assert len(server.received) == 3
    assert caught.value.code is ErrorCode.RATE_LIMITED


async def test_a_busy_conflict_on_cancel_is_retried(sleeps: Sleeps) -> None:
    busy = error(409, "INVALID_REQUEST", "being changed", retryable=True)
    with scripted(busy, ok(SESSION)) as server:
        async with client_for(server.url, sleeps) as client:
            ended = await client.cancel_session("sess_1", CancelSessionRequest())
        assert len(server.received) == 2
    assert ended.status.value == "SESSION_CANCELLED"


# ---------------------------------------------------------------------------------------- rejected


async def test_a_4xx_carries_the_backends_error_shape_and_is_not_retried(sleeps: Sleeps) -> None:
    refused = error(404, "SESSION_NOT_FOUND", "No such session", details={"sessionId": "sess_1"})
    with scripted(refused) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendRejected) as caught:
                await client.get_session("sess_1")
        assert len(server.received) == 1
    assert caught.value.code is ErrorCode.SESSION_NOT_FOUND
    assert caught.value.message == "No such session"
    assert caught.value.shape.details == {"sessionId": "sess_1"}
    assert caught.value.status == 404


async def test_a_401_is_unauthorized_whatever_the_body_says(sleeps: Sleeps) -> None:
    with scripted(
        Reply(status=401, body=b"<html>login</html>", headers={"content-type": "text/html"})
    ) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendRejected) as caught:
                await client.get_session("sess_1")
    assert caught.value.code is ErrorCode.UNAUTHORIZED
    assert "login" not in caught.value.message


async def test_an_html_403_from_a_proxy_is_permission_denied_without_its_markup(sleeps: Sleeps) -> None:
    with scripted(
        Reply(status=403, body=b"<html>Forbidden</html>", headers={"content-type": "text/html"})
    ) as s:
        async with client_for(s.url, sleeps) as client:
            with pytest.raises(BackendRejected) as caught:
                await client.record_approval(approval())
    assert caught.value.code is ErrorCode.PERMISSION_DENIED
    assert caught.value.message == "The request was refused (HTTP 403)"


async def test_a_410_without_a_reason_reads_as_expired(sleeps: Sleeps) -> None:
    for details, reason in [
        ({}, "expired"),
        ({"reason": "failed"}, "failed"),
        ({"reason": "odd"}, "expired"),
    ]:
        with scripted(error(410, "SESSION_EXPIRED", "gone", details=details)) as server:
            async with client_for(server.url, sleeps) as client:
                with pytest.raises(SessionGone) as caught:
                    await client.resume_session("sess_1", ResumeSessionRequest())
        assert caught.value.reason == reason


async def test_a_server_that_echoes_the_token_never_gets_it_into_an_error(sleeps: Sleeps) -> None:
    echo = error(400, "INVALID_REQUEST", f"bad token {TOKEN}", details={"token": TOKEN, "list": [TOKEN]})
    with scripted(echo) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendRejected) as caught:
                await client.get_session("sess_1")
    assert_no_token(caught.value)
    assert caught.value.shape.details == {"token": "[redacted]", "list": ["[redacted]"]}


async def test_a_long_multiline_backend_message_is_one_bounded_line(sleeps: Sleeps) -> None:
    with scripted(error(400, "INVALID_REQUEST", "first\nsecond\r\n" + "x" * 5000)) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendRejected) as caught:
                await client.get_session("sess_1")
    assert caught.value.message.startswith("first second x")
    assert "\n" not in caught.value.message
    assert len(caught.value.message) <= 500


# ----------------------------------------------------------------------------------------- garbage


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body=b"this is not json"),
        Reply(
            body=b"<!doctype html><html><body>Welcome to nginx!</body></html>",
            headers={"content-type": "text/html"},
        ),
        Reply(body=b'{"sessionId": "sess_1"'),
        Reply(body=json.dumps({**SESSION, "status": "SESSION_DANCING"}).encode()),
        Reply(body=json.dumps({**SESSION, "createdAt": 12}).encode()),
        Reply(body=json.dumps({**SESSION, "extra": 1}).encode()),
        Reply(body=b"[]"),
        Reply(status=204),
    ],
    ids=["text", "html", "truncated", "bad-enum", "bad-date", "unknown-field", "array", "empty"],
)
async def test_an_answer_that_does_not_fit_the_contract_is_an_internal_error(
    reply: Reply, sleeps: Sleeps
) -> None:
    with scripted(reply) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendError) as caught:
                await client.get_session("sess_1")
        assert len(server.received) == 1
    error = caught.value
    assert type(error) is BackendError
    assert error.code is ErrorCode.INTERNAL_ERROR
    assert error.message == "The Session Service answered GET /sessions/{sessionId} unexpectedly"
    assert isinstance(error.__cause__, ValidationError)
    assert "validation" not in json.dumps(error.shape.to_wire()).lower()


async def test_an_oversized_answer_is_refused_without_reading_it_all(sleeps: Sleeps) -> None:
    with scripted(Reply(body=b" " * (5 * 1024 * 1024))) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendError) as caught:
                await client.get_session("sess_1")
    assert caught.value.shape.details["problem"] == "the answer is too large"


async def test_published_keys_that_are_not_keys_are_an_internal_error(sleeps: Sleeps) -> None:
    with scripted(ok({"keys": [{"keyId": "k1", "publicKey": "c2hvcnQ"}]})) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendError) as caught:
                await client.policy_keys()
    assert caught.value.code is ErrorCode.INTERNAL_ERROR
    assert caught.value.message == "The Policy Service answered GET /policy/keys unexpectedly"


async def test_a_redirect_is_not_followed(sleeps: Sleeps) -> None:
    with scripted(Reply(status=307, headers={"location": "http://127.0.0.1:9/steal"})) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendError) as caught:
                await client.get_session("sess_1")
        assert len(server.received) == 1
    assert caught.value.shape.details["status"] == 307


async def test_bytes_that_are_not_http_are_retried_then_unreachable(sleeps: Sleeps) -> None:
    with scripted(Reply(raw=b"\x00\xffSSH-2.0-OpenSSH\r\n\r\n")) as server:
        async with client_for(server.url, sleeps, retries=1) as client:
            with pytest.raises(BackendUnreachable) as caught:
                await client.get_session("sess_1")
        assert len(server.received) == 2
    assert caught.value.shape.details["failure"] == "disconnected"
    assert_no_token(caught.value)


async def test_a_closed_client_refuses_calls(sleeps: Sleeps) -> None:
    with scripted(ok(SESSION)) as server:
        client = client_for(server.url, sleeps)
        await client.aclose()
        await client.aclose()
        with pytest.raises(BackendError) as caught:
            await client.get_session("sess_1")
        assert server.received == []
    assert caught.value.code is ErrorCode.INTERNAL_ERROR


async def test_a_cancelled_call_leaves_nothing_running(sleeps: Sleeps) -> None:
    with scripted(Reply(hang=True)) as server:
        async with client_for(server.url, sleeps) as client:
            call = asyncio.create_task(client.get_session("sess_1"))
            assert await asyncio.to_thread(server.arrived.wait, 5)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
