"""Gateway configuration from the environment, the endpoint → URL rule, and backoff arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_runtime.agent_host.llm import GatewayConfig, LlmConfigError, RetrySettings, request_url
from agent_runtime.agent_host.llm.config import is_loopback
from contracts.errors import ErrorCode
from contracts.retry import parse_retry_after


def test_configuration_is_read_from_the_four_variables() -> None:
    config = GatewayConfig.from_env(
        {
            "LLM_GATEWAY_ENDPOINT": " https://gateway.example/v1 ",
            "LLM_GATEWAY_AUTH_TOKEN": "secret-token",
            "LLM_GATEWAY_API": "OpenAI",
            "LLM_GATEWAY_MODEL": " gpt-4.1 ",
        }
    )
    assert config == GatewayConfig("https://gateway.example/v1", "secret-token", "openai", model="gpt-4.1")


def test_the_dialect_defaults_to_anthropic_and_an_empty_token_means_none() -> None:
    config = GatewayConfig.from_env(
        {"LLM_GATEWAY_ENDPOINT": "http://localhost:11434/v1", "LLM_GATEWAY_AUTH_TOKEN": ""}
    )
    assert config.dialect == "anthropic"
    assert config.token is None
    assert config.model is None


@pytest.mark.parametrize(
    ("environ", "variable"),
    [
        ({}, "LLM_GATEWAY_ENDPOINT"),
        ({"LLM_GATEWAY_ENDPOINT": "   "}, "LLM_GATEWAY_ENDPOINT"),
        ({"LLM_GATEWAY_ENDPOINT": "ftp://gateway"}, "LLM_GATEWAY_ENDPOINT"),
        ({"LLM_GATEWAY_ENDPOINT": "gateway.example"}, "LLM_GATEWAY_ENDPOINT"),
        ({"LLM_GATEWAY_ENDPOINT": "https://user:pw@gateway.example"}, "LLM_GATEWAY_ENDPOINT"),
        ({"LLM_GATEWAY_ENDPOINT": "http://[::1"}, "LLM_GATEWAY_ENDPOINT"),
        ({"LLM_GATEWAY_ENDPOINT": "https://gateway.example", "LLM_GATEWAY_API": "gemini"}, "LLM_GATEWAY_API"),
        (
            {"LLM_GATEWAY_ENDPOINT": "https://gateway.example", "LLM_GATEWAY_AUTH_TOKEN": "a\nb"},
            "LLM_GATEWAY_AUTH_TOKEN",
        ),
    ],
)
def test_bad_configuration_is_an_error_naming_the_variable(environ: dict[str, str], variable: str) -> None:
    with pytest.raises(LlmConfigError) as caught:
        GatewayConfig.from_env(environ)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.shape.details["variable"] == variable
    assert variable in caught.value.message


def test_the_token_never_shows_in_the_configuration_repr() -> None:
    config = GatewayConfig("https://gateway.example", "sk-very-secret", "anthropic")
    assert "sk-very-secret" not in repr(config)


@pytest.mark.parametrize(
    ("endpoint", "anthropic", "openai"),
    [
        (
            "https://api.anthropic.com",
            "https://api.anthropic.com/v1/messages",
            "https://api.anthropic.com/v1/chat/completions",
        ),
        (
            "https://api.openai.com/v1",
            "https://api.openai.com/v1/messages",
            "https://api.openai.com/v1/chat/completions",
        ),
        (
            "http://litellm:4000/",
            "http://litellm:4000/v1/messages",
            "http://litellm:4000/v1/chat/completions",
        ),
        (
            "https://openrouter.ai/api/v1",
            "https://openrouter.ai/api/v1/messages",
            "https://openrouter.ai/api/v1/chat/completions",
        ),
        (
            "http://localhost:11434/v1/",
            "http://localhost:11434/v1/messages",
            "http://localhost:11434/v1/chat/completions",
        ),
        (
            "https://gw.example/proxy",
            "https://gw.example/proxy/v1/messages",
            "https://gw.example/proxy/v1/chat/completions",
        ),
        (
            "https://gw.example/a/v1/messages",
            "https://gw.example/a/v1/messages",
            "https://gw.example/a/v1/messages/v1/chat/completions",
        ),
        (
            "https://gw.example/openai/deployments/x/chat/completions?api-version=1",
            "https://gw.example/openai/deployments/x/chat/completions/v1/messages?api-version=1",
            "https://gw.example/openai/deployments/x/chat/completions?api-version=1",
        ),
    ],
)
def test_the_endpoint_becomes_the_dialects_url_by_one_rule(
    endpoint: str, anthropic: str, openai: str
) -> None:
    assert request_url(endpoint, "anthropic") == anthropic
    assert request_url(endpoint, "openai") == openai


@pytest.mark.parametrize(
    ("endpoint", "loopback"),
    [
        ("http://127.0.0.1:8080", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:9000", True),
        ("https://api.anthropic.com", False),
        ("http://10.0.0.5:4000", False),
    ],
)
def test_loopback_endpoints_are_recognised_so_no_proxy_is_used_for_them(
    endpoint: str, loopback: bool
) -> None:
    assert is_loopback(endpoint) is loopback


def test_retry_after_in_seconds_and_in_milliseconds_is_read() -> None:
    never = lambda: 0.0  # noqa: E731
    assert parse_retry_after({"retry-after": "7"}, never) == 7.0
    assert parse_retry_after({"retry-after": "1.5"}, never) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}, never) == 0.25


def test_retry_after_as_an_http_date_counts_from_the_injected_clock() -> None:
    now = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    headers = {"retry-after": "Sun, 01 Mar 2026 12:00:30 GMT"}
    assert parse_retry_after(headers, lambda: now) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after": "Sun, 01 Mar 2026 11:00:00 GMT"}, lambda: now) == 0.0


@pytest.mark.parametrize("value", ["soon", "-3", "nan", "inf", "", "Mon, 99 Foo 2026"])
def test_nonsense_retry_after_is_ignored(value: str) -> None:
    assert parse_retry_after({"retry-after": value}, lambda: 0.0) is None


def test_backoff_is_exponential_with_full_jitter_up_to_the_cap() -> None:
    settings = RetrySettings(base_s=1.0, cap_s=5.0)
    assert [settings.delay(n, lambda: 1.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert settings.delay(3, lambda: 0.25) == 1.0
    assert settings.delay(3, lambda: 0.0) == 0.0


def test_a_gateways_retry_after_wins_over_jitter_but_is_capped() -> None:
    settings = RetrySettings(retry_after_cap_s=60.0)
    assert settings.delay(1, lambda: 0.5, retry_after_s=12.0) == 12.0
    assert settings.delay(1, lambda: 0.5, retry_after_s=3600.0) == 60.0
