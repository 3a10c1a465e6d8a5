"""The Session Service over HTTP (seed 001 §4.1, §4.4; seed 000 §3.2, §3.4, §8.6, §9.5; seed 004)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from backend.common.settings import Settings, VersionRange
from backend.policy.config import PolicyDirectory, builtin_policy
from contracts.enums import Capability
from contracts.errors import ErrorCode
from contracts.policy import PolicyBundle
from contracts.signing import public_key_from_text, verify_bundle
from contracts.validation import validate_json_value
from tests.backend.conftest import AppFactory
from tests.backend.helpers import PROJECT, BackendClient, ManualClock, client_info, session_body


async def test_a_new_session_gets_a_workspace_a_signed_bundle_and_feature_flags(api: BackendClient) -> None:
    created = await api.session([PROJECT])
    assert created["sessionId"].startswith("sess_")
    assert created["workspaceId"].startswith("ws_")
    assert created["workspaceScope"] == "local"
    assert created["sessionStatus"] == "SESSION_CREATED"
    assert created["compatibilityStatus"] == "compatible"
    assert created["featureFlags"]["approvalService"] is True
    bundle = validate_json_value(PolicyBundle, created["policyBundle"])
    assert bundle.session_id == created["sessionId"]
    assert (bundle.tenant_id, bundle.user_id) == ("acme", "alice")
    assert bundle.expires_at.isoformat() == datetime.fromisoformat(created["expiresAt"]).isoformat()
    keys = (await api.http.get("/policy/keys")).json()["keys"]
    assert verify_bundle(bundle, {k["keyId"]: public_key_from_text(k["publicKey"]) for k in keys})


async def test_the_default_policy_confines_files_to_the_project_and_asks_before_risky_actions(
    api: BackendClient,
) -> None:
    bundle = validate_json_value(PolicyBundle, (await api.session([PROJECT]))["policyBundle"])
    read = bundle.grant(Capability.FILE_READ)
    assert read is not None
    assert read.allowed_paths == [PROJECT]
    assert not read.requires_approval
    write = bundle.grant(Capability.FILE_WRITE)
    assert write is not None
    assert write.blocked_paths == [f"{PROJECT}/.git"]
    delete = bundle.grant(Capability.FILE_DELETE)
    assert delete is not None
    assert delete.requires_approval
    assert delete.approval_rule_id
    # Web requests are left to the approval mode too (saved domain rules can answer them).
    http = bundle.grant(Capability.NETWORK_HTTP)
    assert http is not None
    assert not http.requires_approval
    assert http.approval_rule_id
    # Ordinary commands are left to the approval mode (so saved rules can answer them); destructive
    # programs are the policy's own approvals in every mode.
    shell = bundle.grant(Capability.SHELL_EXEC)
    assert shell is not None
    assert not shell.requires_approval
    assert shell.approval_rule_id
    assert {"rm", "git push", "git reset"} <= set(shell.approval_commands or [])
    assert bundle.llm_policy.max_session_tokens > bundle.llm_policy.max_input_tokens


async def test_the_bundle_grants_only_what_the_client_says_it_supports(api: BackendClient) -> None:
    body = session_body([PROJECT], capabilities=["File.Read", "LLM.Call"])
    created = (await api.call("POST", "/sessions", json=body)).json()
    names = [grant["name"] for grant in created["policyBundle"]["capabilities"]]
    assert names == ["File.Read", "LLM.Call"]


async def test_one_project_keeps_one_workspace_across_sessions_and_its_activity_moves(
    api: BackendClient, clock: ManualClock
) -> None:
    first = await api.session([PROJECT])
    clock.advance(hours=3)
    second = await api.session([PROJECT + "/./"])
    assert second["workspaceId"] == first["workspaceId"]
    workspace = (await api.call("GET", f"/workspaces/{first['workspaceId']}")).json()
    assert workspace["lastActiveAt"] == second["createdAt"]
    assert workspace["createdAt"] == first["createdAt"]


async def test_another_user_on_the_same_project_path_gets_their_own_workspace(api: BackendClient) -> None:
    alice = await api.session([PROJECT])
    bob = await api.session([PROJECT], user="bob")
    other_tenant = await api.session([PROJECT], tenant="globex")
    assert len({alice["workspaceId"], bob["workspaceId"], other_tenant["workspaceId"]}) == 3


async def test_a_general_chat_gets_a_fresh_workspace_every_time(api: BackendClient) -> None:
    first, second = await api.session(), await api.session()
    assert first["workspaceScope"] == second["workspaceScope"] == "general"
    assert first["workspaceId"] != second["workspaceId"]
    assert [g["allowedPaths"] for g in first["policyBundle"]["capabilities"] if g["name"] == "File.Read"] == [
        []
    ]


@pytest.mark.parametrize("path", ["relative/path", "", "C:relative", "/tmp/\x00x"])
async def test_a_project_path_that_cannot_identify_a_workspace_is_refused(
    api: BackendClient, path: str
) -> None:
    response = await api.call("POST", "/sessions", json=session_body([path]))
    assert response.status_code == 400
    assert response.json()["code"] == ErrorCode.INVALID_REQUEST


async def test_windows_project_paths_match_whatever_their_case(api: BackendClient) -> None:
    first = await api.session(["C:\\Users\\Alice\\Project"])
    second = await api.session(["c:\\users\\alice\\project\\"])
    assert first["workspaceId"] == second["workspaceId"]
    bundle = first["policyBundle"]
    write = next(g for g in bundle["capabilities"] if g["name"] == "File.Write")
    assert write["blockedPaths"] == ["C:\\Users\\Alice\\Project\\.git"]


@pytest.fixture
def ranged_app(make_app: AppFactory) -> FastAPI:
    settings = Settings(host_versions=VersionRange(supported=">=1.0,<3", deprecated="<1.5"))
    return make_app(settings=settings)


@pytest.mark.parametrize(
    ("host", "verdict", "has_session"),
    [
        ("2.0.0", "compatible", True),
        ("1.2.0", "deprecated", True),
        ("0.9.0", "incompatible", False),
        ("3.0.0", "incompatible", False),
        ("not-a-version", "incompatible", False),
        ("2.1.0rc1", "compatible", True),
    ],
)
async def test_the_client_version_is_checked_against_the_configured_ranges(
    ranged_app: FastAPI, api: BackendClient, host: str, verdict: str, has_session: bool
) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=ranged_app), base_url="http://b") as http:
        body = session_body([PROJECT])
        body["clientInfo"] = client_info(host=host)
        response = await http.post("/sessions", json=body, headers=api.headers())
    answer = response.json()
    assert answer["compatibilityStatus"] == verdict
    assert answer["compatibility"]["localAgentHostVersion"]["status"] == verdict
    assert ("sessionId" in answer) is has_session
    assert ("policyBundle" in answer) is has_session
    assert response.status_code == (201 if has_session else 200)


async def test_get_reports_status_expiry_and_the_bundle_version(
    api: BackendClient, clock: ManualClock
) -> None:
    created = await api.session([PROJECT])
    session = (await api.call("GET", f"/sessions/{created['sessionId']}")).json()
    assert session["status"] == "SESSION_CREATED"
    assert session["expiresAt"] == created["expiresAt"]
    assert session["policyBundleVersion"] == created["policyBundle"]["version"]
    assert (session["resumable"], session["policyExpired"]) == (True, False)
    clock.advance(hours=8, minutes=1)
    later = (await api.call("GET", f"/sessions/{created['sessionId']}")).json()
    assert (later["resumable"], later["policyExpired"]) == (True, True)
    clock.advance(hours=1)
    assert (await api.call("GET", f"/sessions/{created['sessionId']}")).json()["resumable"] is False


async def test_resume_returns_a_fresh_signed_bundle_and_records_the_cursor(
    api: BackendClient, clock: ManualClock
) -> None:
    created = await api.session([PROJECT])
    clock.advance(hours=2)
    body = {"checkpointCursor": "step_003", "policyBundleVersion": created["policyBundle"]["version"]}
    resumed = (await api.call("POST", f"/sessions/{created['sessionId']}/resume", json=body)).json()
    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    assert resumed["policyChanged"] is False
    bundle = validate_json_value(PolicyBundle, resumed["policyBundle"])
    assert bundle.expires_at - clock.now() == timedelta(hours=8)
    assert bundle.signature != created["policyBundle"]["signature"]
    session = (await api.call("GET", f"/sessions/{created['sessionId']}")).json()
    assert (session["status"], session["checkpointCursor"]) == ("SESSION_RUNNING", "step_003")
    assert session["expiresAt"] == resumed["expiresAt"]


async def test_a_session_paused_by_policy_expiry_can_resume_within_the_grace_window(
    api: BackendClient, clock: ManualClock
) -> None:
    created = await api.session([PROJECT])
    clock.advance(hours=8, minutes=30)
    response = await api.call("POST", f"/sessions/{created['sessionId']}/resume", json={})
    assert response.status_code == 200


async def test_resume_after_the_grace_window_is_session_expired(
    api: BackendClient, clock: ManualClock
) -> None:
    created = await api.session([PROJECT])
    clock.advance(hours=9)
    response = await api.call("POST", f"/sessions/{created['sessionId']}/resume", json={})
    assert response.status_code == 410
    error = response.json()
    assert (error["code"], error["details"]["reason"]) == (ErrorCode.SESSION_EXPIRED, "expired")


async def test_resume_of_a_cancelled_session_is_session_expired_saying_why(api: BackendClient) -> None:
    created = await api.session([PROJECT])
    await api.call("POST", f"/sessions/{created['sessionId']}/cancel", json={"reason": "user closed it"})
    response = await api.call("POST", f"/sessions/{created['sessionId']}/resume")
    assert response.status_code == 410
    assert response.json()["details"] == {
        "sessionId": created["sessionId"],
        "reason": "cancelled",
        "status": "SESSION_CANCELLED",
    }


async def test_resume_reports_a_changed_policy_with_a_new_version(
    make_app: AppFactory, api: BackendClient, tmp_path: Path
) -> None:
    policies = PolicyDirectory(tmp_path, builtin_policy())
    app = make_app(policies=policies)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
        created = (await http.post("/sessions", json=session_body([PROJECT]), headers=api.headers())).json()
        (tmp_path / "tenants").mkdir()
        (tmp_path / "tenants" / "acme.toml").write_text(
            '[llmPolicy]\nallowedModels = ["claude-sonnet"]\n'
            "maxInputTokens = 1000\nmaxOutputTokens = 100\n"
            "maxSessionTokens = 5000\n"
        )
        policies._resolved.clear()  # the directory re-reads at most once a second; no waiting here
        held = {"policyBundleVersion": created["policyBundle"]["version"]}
        resumed = (
            await http.post(f"/sessions/{created['sessionId']}/resume", json=held, headers=api.headers())
        ).json()
    assert resumed["policyChanged"] is True
    assert resumed["policyBundle"]["version"] != created["policyBundle"]["version"]
    assert resumed["policyBundle"]["llmPolicy"]["allowedModels"] == ["claude-sonnet"]


async def test_cancel_records_the_end_and_is_idempotent(api: BackendClient, clock: ManualClock) -> None:
    created = await api.session([PROJECT])
    path = f"/sessions/{created['sessionId']}/cancel"
    first = await api.call("POST", path, json={"reason": "Shutdown", "finalStatus": "SESSION_COMPLETED"})
    assert first.status_code == 200
    assert (first.json()["status"], first.json()["endReason"]) == ("SESSION_COMPLETED", "Shutdown")
    clock.advance(minutes=5)
    again = await api.call("POST", path, json={"reason": "again"})
    assert again.status_code == 200
    assert again.json() == first.json()


async def test_cancel_accepts_an_empty_body(api: BackendClient) -> None:
    created = await api.session([PROJECT])
    response = await api.http.post(f"/sessions/{created['sessionId']}/cancel", headers=api.headers())
    assert response.status_code == 200
    assert response.json()["status"] == "SESSION_CANCELLED"


async def test_a_final_status_that_is_not_an_end_is_refused(api: BackendClient) -> None:
    created = await api.session([PROJECT])
    response = await api.call(
        "POST", f"/sessions/{created['sessionId']}/cancel", json={"finalStatus": "SESSION_RUNNING"}
    )
    assert response.status_code == 400
    assert response.json()["details"]["field"] == "finalStatus"


async def test_sessions_of_a_workspace_are_listed_newest_first(
    api: BackendClient, clock: ManualClock
) -> None:
    first = await api.session([PROJECT])
    clock.advance(minutes=1)
    second = await api.session([PROJECT])
    await api.session(["/elsewhere"])
    listed = (await api.call("GET", f"/sessions?workspaceId={first['workspaceId']}")).json()["sessions"]
    assert [s["sessionId"] for s in listed] == [second["sessionId"], first["sessionId"]]


async def test_an_unknown_session_is_session_not_found(api: BackendClient) -> None:
    for method, path in (
        ("GET", "/sessions/sess_nope"),
        ("POST", "/sessions/sess_nope/resume"),
        ("POST", "/sessions/sess_nope/cancel"),
    ):
        response = await api.call(method, path, json={} if method == "POST" else None)
        assert response.status_code == 404
        assert response.json()["code"] == ErrorCode.SESSION_NOT_FOUND


async def test_the_body_cannot_name_the_tenant_or_user(api: BackendClient) -> None:
    body = session_body([PROJECT], tenantId="globex", userId="mallory")
    response = await api.call("POST", "/sessions", json=body)
    assert response.status_code == 400
    assert response.json()["details"]["field"] in ("tenantId", "userId")
