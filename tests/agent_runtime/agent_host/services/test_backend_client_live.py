"""The backend client against the real local backend (``cowork-backend serve --store local``), started
once for this module with a compatibility range configured (``backend.toml``)."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agent_runtime.agent_host.services import (
    BackendClient,
    BackendConfig,
    BackendError,
    BackendRejected,
    BackendUnreachable,
    SessionGone,
    keys_from_environment,
    verify_policy_bundle,
)
from contracts.approvals import ApprovalDecisionRecord
from contracts.enums import (
    ApprovalDecision,
    ArtifactType,
    Capability,
    CompatibilityStatus,
    OsFamily,
    SessionStatus,
)
from contracts.errors import ErrorCode
from contracts.methods import ClientInfo, WorkspaceHint
from contracts.rest.sessions import (
    CancelSessionRequest,
    CreateSessionRequest,
    CreateSessionResponse,
    ResumeSessionRequest,
)
from contracts.rest.workspaces import ArtifactUploadRequest
from contracts.signing import key_id, sign_bundle
from tests.support.backend import Backend, start_backend

from .fakes import CuttingProxy

BACKEND_TOML = """
[compatibility.localAgentHostVersion]
supported = ">=0.1,<2"
deprecated = "<0.5"
"""


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    root = tmp_path_factory.mktemp("backend")
    config_dir = root / "config"
    config_dir.mkdir()
    (config_dir / "backend.toml").write_text(BACKEND_TOML)
    with start_backend(root / "data", config_dir=config_dir) as running:
        yield running


@pytest.fixture
def config(backend: Backend) -> BackendConfig:
    return BackendConfig.from_environment(
        {"COWORK_BACKEND_URL": backend.url, "COWORK_BACKEND_TOKEN": backend.token}
    )


def create_request(project: Path | None, *, host_version: str = "1.0.0") -> CreateSessionRequest:
    return CreateSessionRequest(
        client_info=ClientInfo(
            desktop_app_version="1.0.0", local_agent_host_version=host_version, os_family=OsFamily.LINUX
        ),
        supported_capabilities=[Capability.FILE_READ, Capability.FILE_WRITE, Capability.WORKSPACE_UPLOAD],
        workspace_hint=None if project is None else WorkspaceHint(local_paths=[str(project)]),
    )


async def new_session(client: BackendClient, tmp_path: Path) -> CreateSessionResponse:
    created = await client.create_session(create_request(tmp_path))
    assert created.compatibility_status is CompatibilityStatus.COMPATIBLE
    assert created.session_id is not None
    assert created.workspace_id is not None
    return created


def artifact(created: CreateSessionResponse, content: bytes, name: str = "out.txt") -> ArtifactUploadRequest:
    assert created.session_id is not None
    assert created.workspace_id is not None
    return ArtifactUploadRequest(
        workspace_id=created.workspace_id,
        session_id=created.session_id,
        task_id="task_1",
        step_id="step_1",
        artifact_type=ArtifactType.TOOL_OUTPUT,
        artifact_name=name,
        content_type="text/plain",
        content_base64=base64.b64encode(content).decode(),
    )


async def test_a_session_is_created_verified_read_resumed_and_cancelled(
    config: BackendConfig, tmp_path: Path
) -> None:
    async with BackendClient(config) as client:
        created = await new_session(client, tmp_path)
        assert created.session_id is not None
        assert created.policy_bundle is not None
        keys = await client.policy_keys()
        verify_policy_bundle(created.policy_bundle, keys)

        read = await client.get_session(created.session_id)
        assert read.status is SessionStatus.SESSION_CREATED
        assert read.workspace_id == created.workspace_id

        resumed = await client.resume_session(
            created.session_id,
            ResumeSessionRequest(
                checkpoint_cursor="step_3", policy_bundle_version=created.policy_bundle.version
            ),
        )
        assert resumed.session_status is SessionStatus.SESSION_RUNNING
        verify_policy_bundle(resumed.policy_bundle, keys)
        assert (await client.get_session(created.session_id)).checkpoint_cursor == "step_3"

        cancelled = await client.cancel_session(created.session_id, CancelSessionRequest(reason="user quit"))
        assert cancelled.status is SessionStatus.SESSION_CANCELLED
        again = await client.cancel_session(created.session_id, CancelSessionRequest(reason="twice"))
        assert again.status is SessionStatus.SESSION_CANCELLED
        assert again.end_reason == "user quit"


@pytest.mark.parametrize(
    ("final_status", "reason"), [("SESSION_CANCELLED", "cancelled"), ("SESSION_COMPLETED", "completed")]
)
async def test_resuming_an_ended_session_raises_session_gone_with_the_reason(
    config: BackendConfig, tmp_path: Path, final_status: Any, reason: str
) -> None:
    async with BackendClient(config) as client:
        created = await new_session(client, tmp_path)
        assert created.session_id is not None
        await client.cancel_session(created.session_id, CancelSessionRequest(final_status=final_status))
        with pytest.raises(SessionGone) as caught:
            await client.resume_session(created.session_id, ResumeSessionRequest())
    assert caught.value.code is ErrorCode.SESSION_EXPIRED
    assert caught.value.status == 410
    assert caught.value.reason == reason
    assert caught.value.shape.details["sessionId"] == created.session_id


async def test_an_incompatible_runtime_gets_a_verdict_and_no_session(config: BackendConfig) -> None:
    async with BackendClient(config) as client:
        verdict = await client.create_session(create_request(None, host_version="7.0.0"))
    assert verdict.compatibility_status is CompatibilityStatus.INCOMPATIBLE
    assert verdict.session_id is None
    assert verdict.policy_bundle is None
    host = verdict.compatibility["localAgentHostVersion"]
    assert host.status is CompatibilityStatus.INCOMPATIBLE
    assert host.supported == "<2,>=0.1"


async def test_a_runtime_in_the_configured_deprecated_range_gets_a_session_flagged_deprecated(
    config: BackendConfig,
) -> None:
    async with BackendClient(config) as client:
        created = await client.create_session(create_request(None, host_version="0.2.0"))
    assert created.compatibility_status is CompatibilityStatus.DEPRECATED
    assert created.session_id is not None
    assert created.compatibility["localAgentHostVersion"].deprecated == "<0.5"


async def test_an_unknown_session_is_rejected_as_not_found_without_retries(config: BackendConfig) -> None:
    async with BackendClient(config) as client:
        with pytest.raises(BackendRejected) as caught:
            await client.get_session("sess_does_not_exist")
    assert caught.value.code is ErrorCode.SESSION_NOT_FOUND
    assert caught.value.status == 404
    assert not isinstance(caught.value, SessionGone)


@pytest.mark.parametrize(
    "session_id", ["../../policy/keys", "..", "sess/../x", "sess%2F..", "sess\r\nX-Evil: 1", "", "s" * 129]
)
async def test_a_session_id_from_a_checkpoint_cannot_steer_the_request_elsewhere(
    config: BackendConfig, session_id: str
) -> None:
    async with BackendClient(config) as client:
        with pytest.raises(BackendError) as caught:
            await client.resume_session(session_id, ResumeSessionRequest())
    assert type(caught.value) is BackendError
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.shape.details == {"field": "sessionId"}


async def test_an_artifact_upload_repeated_with_its_idempotency_key_returns_the_first(
    config: BackendConfig, tmp_path: Path
) -> None:
    async with BackendClient(config) as client:
        created = await new_session(client, tmp_path)
        key = f"upload-{uuid.uuid4().hex}"
        first = await client.upload_artifact(artifact(created, b"hello"), idempotency_key=key)
        second = await client.upload_artifact(artifact(created, b"hello"), idempotency_key=key)
        other = await client.upload_artifact(artifact(created, b"other", name="other.txt"))
    assert first.outcome == "created"
    assert second.outcome == "unchanged"
    assert second.artifact_id == first.artifact_id
    assert first.artifact_uri.startswith(f"cowork://workspaces/{created.workspace_id}/artifacts/")
    assert first.size_bytes == 5
    assert other.outcome == "created"
    assert other.artifact_id != first.artifact_id


async def test_an_upload_whose_answer_was_lost_is_retried_and_stored_once(
    config: BackendConfig, backend: Backend, tmp_path: Path
) -> None:
    async with BackendClient(config) as direct:
        created = await new_session(direct, tmp_path)
    url = httpx.URL(backend.url)
    async with CuttingProxy(url.host, url.port or 80, cut=1) as proxy:
        proxied = BackendConfig(url=proxy.url, token=config.token)
        async with BackendClient(proxied, base_delay_s=0.0) as client:
            uploaded = await client.upload_artifact(artifact(created, b"once only"))
        assert proxy.cut_done == 1
        assert proxy.connections == 2
    assert uploaded.outcome == "unchanged"  # the first attempt stored it; the retry found it
    async with backend.http() as raw:
        listed = await raw.get(
            f"/workspaces/{created.workspace_id}/artifacts", params={"sessionId": created.session_id}
        )
    assert [a["artifactId"] for a in listed.json()["artifacts"]] == [uploaded.artifact_id]


async def test_a_lost_create_answer_is_not_retried_so_no_second_session_appears(
    config: BackendConfig, backend: Backend, tmp_path: Path
) -> None:
    url = httpx.URL(backend.url)
    async with CuttingProxy(url.host, url.port or 80, cut=1) as proxy:
        proxied = BackendConfig(url=proxy.url, token=config.token)
        async with BackendClient(proxied, base_delay_s=0.0) as client:
            with pytest.raises(BackendUnreachable) as caught:
                await client.create_session(create_request(tmp_path / "lost"))
        assert proxy.connections == 1
    assert caught.value.attempts == 1
    assert caught.value.shape.details["failure"] == "disconnected"


async def test_an_approval_is_recorded_once_and_a_conflicting_one_is_rejected(
    config: BackendConfig, tmp_path: Path
) -> None:
    async with BackendClient(config) as client:
        created = await new_session(client, tmp_path)
        assert created.session_id is not None
        record = ApprovalDecisionRecord(
            approval_id=f"appr_{uuid.uuid4().hex}",
            session_id=created.session_id,
            task_id="task_1",
            step_id="step_1",
            decision=ApprovalDecision.APPROVED,
            decided_at=datetime.now(UTC),
        )
        first = await client.record_approval(record)
        repeated = await client.record_approval(record)
        conflicting = record.model_copy(update={"decision": ApprovalDecision.DENIED})
        with pytest.raises(BackendRejected) as caught:
            await client.record_approval(conflicting)
    assert first.workspace_id == created.workspace_id
    assert repeated.recorded_at == first.recorded_at
    assert caught.value.status == 409
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.shape.details["field"] == "approvalId"


async def test_published_keys_match_the_pinned_ones_and_a_tampered_bundle_fails(
    config: BackendConfig, backend: Backend, tmp_path: Path
) -> None:
    pinned = keys_from_environment({"COWORK_POLICY_KEYS": json.dumps(backend.policy_keys)})
    assert pinned is not None
    async with BackendClient(config) as client:
        fetched = await client.policy_keys()
        created = await new_session(client, tmp_path)
    bundle = created.policy_bundle
    assert bundle is not None
    assert fetched.keys() == pinned.keys()
    verify_policy_bundle(bundle, pinned)

    widened = bundle.model_copy(update={"expires_at": bundle.expires_at + timedelta(days=365)})
    unsigned = bundle.model_copy(update={"signature": None})
    stranger = Ed25519PrivateKey.generate()
    foreign = sign_bundle(bundle, stranger)
    forged = sign_bundle(bundle, stranger, kid=next(iter(pinned)))
    reasons = {}
    for name, candidate in [
        ("widened", widened),
        ("unsigned", unsigned),
        ("foreign", foreign),
        ("forged", forged),
    ]:
        with pytest.raises(BackendError) as caught:
            verify_policy_bundle(candidate, pinned)
        assert caught.value.code is ErrorCode.POLICY_BUNDLE_INVALID
        reasons[name] = caught.value.shape.details["reason"]
    assert reasons == {
        "widened": "bad_signature",
        "unsigned": "unsigned",
        "foreign": "unknown_key",
        "forged": "bad_signature",
    }
    assert key_id(stranger.public_key()) not in pinned


@pytest.mark.parametrize(
    "token",
    [
        "not-a-jwt",
        # Well-formed, signed by a key the backend does not trust.
        "eyJhbGciOiJFZERTQSIsImtpZCI6Inh4eCJ9.eyJ0aWQiOiJsb2NhbCIsInN1YiI6InUifQ.c2lnbmF0dXJl",
    ],
)
async def test_a_wrong_token_is_unauthorized_and_never_shown(config: BackendConfig, token: str) -> None:
    async with BackendClient(BackendConfig(url=config.url, token=token)) as client:
        with pytest.raises(BackendRejected) as caught:
            await client.create_session(create_request(None))
    error = caught.value
    assert error.code is ErrorCode.UNAUTHORIZED
    assert error.status == 401
    assert not error.retryable
    for text in (str(error), repr(error), json.dumps(error.shape.to_wire())):
        assert token not in text
        assert config.token not in text
