"""The backend's REST payloads (contracts.rest): strict, camelCase, bounded, and internally consistent."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import contracts
from contracts.rest.sessions import CreateSessionRequest, CreateSessionResponse
from contracts.rest.workspaces import ArtifactUploadRequest, ResolveWorkspaceRequest
from contracts.validation import invalid_request, validate_json_value
from tests.contracts.test_documents import POLICY

CLIENT = {"desktopAppVersion": "1.0.0", "localAgentHostVersion": "1.0.0", "osFamily": "macOS"}
VERDICT = {"localAgentHostVersion": {"version": "0.1", "supported": ">=1", "status": "incompatible"}}


def _field(model: Any, value: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as raised:
        validate_json_value(model, value)
    return str(invalid_request(raised.value).details["field"])


def test_the_seeds_create_session_call_fits_the_request_without_tenant_or_user() -> None:
    request = validate_json_value(
        CreateSessionRequest,
        {
            "executionEnvironment": "desktop",
            "workspaceHint": {"localPaths": ["/Users/suman/projects/demo"]},
            "clientInfo": CLIENT,
            "supportedCapabilities": ["File.Read", "File.Write", "Shell.Exec", "Network.Http", "LLM.Call"],
        },
    )
    assert request.workspace_hint is not None
    assert (
        _field(CreateSessionRequest, {"clientInfo": CLIENT, "supportedCapabilities": [], "tenantId": "x"})
        == "tenantId"
    )


def test_an_incompatible_verdict_carries_no_session_and_a_compatible_one_needs_it() -> None:
    verdict = validate_json_value(
        CreateSessionResponse, {"compatibilityStatus": "incompatible", "compatibility": VERDICT}
    )
    assert verdict.session_id is None
    with pytest.raises(ValidationError, match="incompatible client gets no session"):
        validate_json_value(
            CreateSessionResponse,
            {"compatibilityStatus": "incompatible", "compatibility": VERDICT, "sessionId": "s"},
        )
    with pytest.raises(ValidationError, match="are required"):
        validate_json_value(CreateSessionResponse, {"compatibilityStatus": "compatible", "compatibility": {}})
    complete = {
        "compatibilityStatus": "deprecated",
        "compatibility": {},
        "sessionId": "sess_789",
        "workspaceId": "ws_1",
        "policyBundle": POLICY,
        "expiresAt": "2026-02-21T23:00:00Z",
    }
    assert validate_json_value(CreateSessionResponse, complete).policy_bundle is not None


UPLOAD = {
    "workspaceId": "ws_456",
    "sessionId": "sess_789",
    "taskId": "task_001",
    "stepId": "step_003",
    "artifactType": "file_diff",
    "artifactName": "api_client.diff",
    "contentType": "text/x-diff; charset=utf-8",
    "contentBase64": "",
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"contentType": "text/plain\nX-Evil: 1"}, "contentType"),
        ({"contentType": "nonsense"}, "contentType"),
        ({"contentType": 'text/plain; name="a\\"b"'}, "contentType"),
        ({"artifactName": "x" * 256}, "artifactName"),
        ({"workspaceId": "w" * 129}, "workspaceId"),
        ({"sessionId": "\x07"}, "sessionId"),
    ],
)
def test_upload_fields_that_could_hurt_a_header_or_a_key_are_refused(
    change: dict[str, str], field: str
) -> None:
    assert _field(ArtifactUploadRequest, {**UPLOAD, **change}) == field


def test_a_step_artifact_needs_its_ids_but_a_history_does_not() -> None:
    with pytest.raises(ValidationError, match="needs taskId and stepId"):
        validate_json_value(ArtifactUploadRequest, {k: v for k, v in UPLOAD.items() if k != "stepId"})
    history = {k: v for k, v in UPLOAD.items() if k not in ("taskId", "stepId")}
    assert (
        validate_json_value(ArtifactUploadRequest, {**history, "artifactType": "session_history"}).task_id
        is None
    )


def test_a_local_workspace_needs_its_paths() -> None:
    with pytest.raises(ValidationError, match="needs localPaths"):
        validate_json_value(ResolveWorkspaceRequest, {"workspaceScope": "local"})
    assert validate_json_value(ResolveWorkspaceRequest, {"workspaceScope": "general"}).local_paths is None


def test_the_rest_payloads_are_part_of_the_public_surface() -> None:
    for name in (
        "CreateSessionRequest",
        "ArtifactUploadRequest",
        "PolicyKeySet",
        "AuditReceipts",
        "sign_bundle",
    ):
        assert name in contracts.__all__
