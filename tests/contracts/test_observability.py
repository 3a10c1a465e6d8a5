"""The featureFlags that switch audit and telemetry, and the envelope-only event types."""

from __future__ import annotations

import pytest

from contracts.events import PAYLOADS, EventType
from contracts.observability import FeatureFlag, flag_enabled


@pytest.mark.parametrize(
    ("flags", "on"),
    [
        ({"auditService": True}, True),
        ({"auditService": False}, False),
        ({}, False),
        (None, False),
        ({"auditService": "true"}, False),
        ({"auditService": 1}, False),
        ({"telemetryService": True}, False),
    ],
)
def test_only_an_explicit_true_turns_a_service_on(flags: dict[str, object] | None, on: bool) -> None:
    assert flag_enabled(flags, FeatureFlag.AUDIT_SERVICE) is on


def test_the_flags_are_spelled_as_the_policy_service_sends_them() -> None:
    assert {flag.value for flag in FeatureFlag} == {"auditService", "telemetryService", "approvalService"}


@pytest.mark.parametrize(
    "name",
    [
        "policy_decision",
        "policy_loaded",
        "runtime_started",
        "approval_shown",
        "update_installed",
        "update_rolled_back",
    ],
)
def test_every_envelope_only_type_has_a_payload_model(name: str) -> None:
    assert EventType(name) in PAYLOADS
