"""Policy bundles for the enforcer's tests, built the way the Session Service sends them: as JSON."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agent_runtime.agent_host.policy import PolicyEnforcer
from contracts.enums import OsFamily

NOW = datetime(2026, 2, 21, 15, 0, tzinfo=UTC)
EXPIRES = NOW + timedelta(hours=1)


def bundle_json(
    *grants: dict[str, Any], rules: list[dict[str, Any]] | None = None, **llm: Any
) -> dict[str, Any]:
    return {
        "sessionId": "sess_1",
        "capabilities": list(grants),
        "approvalRules": rules or [],
        "llmPolicy": {
            "allowedModels": ["model-a", "model-b"],
            "maxInputTokens": 100_000,
            "maxOutputTokens": 4_000,
            "maxSessionTokens": 1_000_000,
            **llm,
        },
        "expiresAt": EXPIRES.isoformat(),
        "schemaVersion": "1.0",
        "version": "2026-02-21.1",
    }


def enforcer(*grants: dict[str, Any], os_family: OsFamily = OsFamily.LINUX, **kwargs: Any) -> PolicyEnforcer:
    return PolicyEnforcer.load(
        bundle_json(*grants, **kwargs), session_id="sess_1", now=NOW, os_family=os_family
    )
