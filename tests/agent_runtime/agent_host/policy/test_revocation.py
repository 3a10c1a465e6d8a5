"""A revoked policy (issue 22: the organisation revoked it, the Session Service pushed the news): every
check answers "expired (revoked)" with the reason, so the loop pauses the session through the same
paths as an expiry (seed 000 §8.6) — and the enforcer it came from is left as it was (pure)."""

from __future__ import annotations

from agent_runtime.agent_host.policy import Allowed, PolicyExpired, ToolCallFacts
from contracts.enums import ApprovalMode, Capability
from contracts.errors import ErrorCode
from tests.agent_runtime.agent_host.policy.bundles import EXPIRES, NOW, enforcer

READ = ToolCallFacts(tool_name="ReadFile", arguments={"path": "/p/a.txt"}, resolved_path="/p/a.txt")


def test_every_check_of_a_revoked_policy_is_a_revocation_and_the_original_stands() -> None:
    standing = enforcer({"name": "File.Read"}, {"name": "LLM.Call"})
    revoked = standing.revoked("key compromise")

    tool = revoked.check(READ, Capability.FILE_READ, now=NOW, approval_mode=ApprovalMode.NEVER)
    llm = revoked.check_llm_call("demo-model", now=NOW)

    assert isinstance(tool, PolicyExpired)
    assert isinstance(llm, PolicyExpired)
    assert tool.revoked
    assert tool.revoked_reason == "key compromise"
    assert revoked.is_expired(NOW)
    assert revoked.revocation == "key compromise"
    assert revoked.bundle is standing.bundle
    # The enforcer it was made from still allows what it allowed.
    assert standing.revocation is None
    assert not standing.is_expired(NOW)
    assert isinstance(
        standing.check(READ, Capability.FILE_READ, now=NOW, approval_mode=ApprovalMode.NEVER), Allowed
    )


def test_a_revocation_reads_as_one_and_an_expiry_as_an_expiry() -> None:
    revoked = enforcer({"name": "LLM.Call"}).revoked("offboarding").lapsed()
    expired = enforcer({"name": "LLM.Call"}).lapsed()

    error = revoked.to_error()
    assert error.code is ErrorCode.POLICY_EXPIRED
    assert error.details == {"reason": "revoked", "revocationReason": "offboarding"}
    assert "revoked by an administrator (offboarding)" in error.message
    assert not expired.revoked
    assert expired.to_error().details == {"expiresAt": EXPIRES.isoformat()}
