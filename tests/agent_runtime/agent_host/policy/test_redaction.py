"""Redaction of secrets from outbound prompts (seed 000 §8.7): kinds, markers, bundle settings,
linear time on adversarial input, and the message helper that leaves the thread untouched."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from agent_runtime.agent_host.policy import BUILTIN_KINDS, Redactor, redact
from contracts.enums import Role
from contracts.messages import ConversationMessage
from contracts.policy import RedactionPattern, RedactionPolicy
from contracts.tools import ToolCall

SECRETS = [
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1\n-----END RSA PRIVATE KEY-----", ""),
    ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", ""),
    ("aws_access_key", "AKIAIOSFODNN7EXAMPLE", ""),
    ("aws_access_key", "ASIAY34FZKBOKMUTVV7A", ""),
    (
        "aws_secret_key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = ",
    ),
    ("bearer_token", "Authorization: Bearer abcdef0123456789.xyz", "Authorization: Bearer "),
    ("basic_auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic "),
    ("url_password", "postgres://app:s3cr3t-pw@db.internal:5432/app", "postgres://app:"),
    ("github_token", "ghp_" + "a1B2" * 9, ""),
    ("github_token", "github_pat_" + "A1b2_" * 6, ""),
    ("slack_token", "xoxb-123456789012-abcdefABCDEF", ""),
    ("stripe_key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", ""),
    ("stripe_key", "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", ""),
    ("google_api_key", "AIzaSyA-1234567890abcdefghijklmnopqrstu", ""),
    ("anthropic_key", "sk-ant-api03-" + "x" * 40, ""),
    ("openai_key", "sk-proj-" + "Ab1" * 15, ""),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", ""),
    ("secret_assignment", "password=hunter22!", "password="),
    ("secret_assignment", 'DB_PASSWORD="correct horse"', 'DB_PASSWORD="'),
    ("secret_assignment", "api_key: 'abc123def'", "api_key: '"),
    ("secret_assignment", "CLIENT_SECRET=Zx9-long-secret", "CLIENT_SECRET="),
]


@pytest.mark.parametrize(("kind", "text", "kept"), SECRETS)
def test_each_kind_of_secret_is_replaced_by_a_marker_naming_its_kind(kind: str, text: str, kept: str) -> None:
    redacted, counts = redact(f"before {text} after")
    assert counts == {kind: 1}
    assert f"[REDACTED:{kind}]" in redacted
    assert redacted.startswith(f"before {kept}[REDACTED:{kind}]")
    assert redacted.endswith(" after") or kind == "private_key"


def test_every_built_in_kind_is_covered_by_a_case() -> None:
    assert {kind for kind, _, _ in SECRETS} == set(BUILTIN_KINDS)


@pytest.mark.parametrize(
    "text",
    [
        "The password is stored in the vault.",
        "api_key: Optional[str] = None",
        "password = os.environ['DB_PASSWORD']",
        "secret=${SECRET}",
        "password: null",
        "see https://example.com/path?x=1",
        "sk-short",
        "Bearer tokens are described in RFC 6750",
    ],
)
def test_prose_code_and_placeholders_are_left_alone(text: str) -> None:
    assert redact(text) == (text, {})


def test_several_secrets_are_counted_by_kind() -> None:
    text = "AKIAIOSFODNN7EXAMPLE and AKIAI44QH8DHBEXAMPLE and password=hunter22!"
    _, counts = redact(text)
    assert counts == {"aws_access_key": 2, "secret_assignment": 1}


def test_a_megabyte_of_adversarial_input_is_redacted_in_linear_time() -> None:
    cases = [
        "-----BEGIN RSA PRIVATE KEY-----" * 30_000,
        "password=" * 110_000,
        "https://a:" * 100_000,
        "eyJ" + "a" * 1_000_000,
        "Bearer " * 140_000,
        ("x" * 9 + " ") * 100_000,
    ]
    for text in cases:
        started = time.perf_counter()
        redact(text)
        assert time.perf_counter() - started < 2.0, text[:40]


def test_the_bundle_can_turn_redaction_off() -> None:
    redactor = Redactor(RedactionPolicy(enabled=False))
    result = redactor.redact("AKIAIOSFODNN7EXAMPLE")
    assert result.text == "AKIAIOSFODNN7EXAMPLE"
    assert result.event_payload() is None


def test_the_bundle_can_add_patterns_of_its_own() -> None:
    policy = RedactionPolicy(
        extra_patterns=[RedactionPattern(kind="employee_id", pattern=r"\bEMP-[0-9]{6}\b")]
    )
    result = Redactor(policy).redact("ticket for EMP-123456 and AKIAIOSFODNN7EXAMPLE")
    assert result.text == "ticket for [REDACTED:employee_id] and [REDACTED:aws_access_key]"
    payload = result.event_payload()
    assert payload is not None
    assert (payload.count, payload.kinds) == (2, ["aws_access_key", "employee_id"])


def test_an_added_pattern_that_would_backtrack_in_re_still_runs_in_linear_time() -> None:
    policy = RedactionPolicy(extra_patterns=[RedactionPattern(kind="evil", pattern=r"(a+)+b")])
    started = time.perf_counter()
    result = Redactor(policy).redact("a" * 200_000 + "c")
    assert time.perf_counter() - started < 2.0
    assert result.counts == {}


def test_redacting_messages_copies_what_changes_and_leaves_the_thread_untouched() -> None:
    stamp = datetime(2026, 2, 21, tzinfo=UTC)
    clean = ConversationMessage(
        message_id="m1", session_id="s", role=Role.USER, content="hello", timestamp=stamp
    )
    secret = ConversationMessage(
        message_id="m2",
        session_id="s",
        role=Role.USER,
        content="my key is AKIAIOSFODNN7EXAMPLE",
        timestamp=stamp,
    )
    call = ConversationMessage(
        message_id="m3",
        session_id="s",
        role=Role.ASSISTANT,
        content="",
        timestamp=stamp,
        tool_calls=[
            ToolCall(tool_call_id="c", tool_name="WriteFile", arguments={"content": ["password=hunter22!"]})
        ],
    )
    sent, result = Redactor().redact_messages([clean, secret, call])
    assert sent[0] is clean
    assert sent[1].content == "my key is [REDACTED:aws_access_key]"
    assert secret.content == "my key is AKIAIOSFODNN7EXAMPLE"
    assert sent[2].tool_calls is not None
    assert sent[2].tool_calls[0].arguments == {"content": ["password=[REDACTED:secret_assignment]"]}
    assert call.tool_calls is not None
    assert call.tool_calls[0].arguments == {"content": ["password=hunter22!"]}
    assert dict(result.counts) == {"aws_access_key": 1, "secret_assignment": 1}
