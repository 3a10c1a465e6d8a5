"""BackendConfig and the policy keys from the environment: clear errors naming the variable, the
token never shown, plain HTTP only on this machine."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import agent_runtime.agent_host.services as services
from agent_runtime.agent_host.services import (
    BackendConfig,
    BackendConfigError,
    BackendError,
    keys_from_environment,
)
from contracts.errors import ErrorCode
from contracts.signing import key_id, public_key_to_text

TOKEN = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJqYW5lIn0.c2lnbmF0dXJl"


def env(url: str | None = "http://127.0.0.1:8787", token: str | None = TOKEN) -> dict[str, str]:
    values = {"COWORK_BACKEND_URL": url, "COWORK_BACKEND_TOKEN": token}
    return {name: value for name, value in values.items() if value is not None}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8787", "http://127.0.0.1:8787"),
        ("http://127.0.0.2:8787/", "http://127.0.0.2:8787"),
        ("http://localhost:8787", "http://localhost:8787"),
        ("http://[::1]:8787", "http://[::1]:8787"),
        ("https://cowork.example.com", "https://cowork.example.com"),
        ("https://cowork.example.com/api/", "https://cowork.example.com/api"),
        ("  https://10.0.0.5:8443  ", "https://10.0.0.5:8443"),
    ],
)
def test_an_https_or_loopback_url_is_accepted(url: str, expected: str) -> None:
    config = BackendConfig.from_environment(env(url))
    assert config.url == expected
    assert config.token == TOKEN


@pytest.mark.parametrize(
    "url",
    [
        "http://cowork.example.com",
        "http://10.0.0.5:8787",
        "http://192.168.1.2",
        "http://localhost.evil.com",
        "http://app.localhost:8787",
        "http://0.0.0.0:8787",
    ],
)
def test_plain_http_to_another_machine_is_refused_so_the_token_never_travels_in_clear(url: str) -> None:
    with pytest.raises(BackendConfigError) as caught:
        BackendConfig.from_environment(env(url))
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.variable == "COWORK_BACKEND_URL"
    assert "https://" in caught.value.message
    assert caught.value.message.startswith("COWORK_BACKEND_URL ")


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "   ",
        "ftp://127.0.0.1",
        "127.0.0.1:8787",
        "https://",
        "https://user:hunter2@cowork.example.com",
        "https://cowork.example.com/?token=x",
        "https://cowork.example.com/#frag",
        "http://[::1",
    ],
)
def test_a_missing_or_malformed_url_names_the_variable(url: str | None) -> None:
    with pytest.raises(BackendConfigError) as caught:
        BackendConfig.from_environment(env(url))
    assert caught.value.shape.details == {"variable": "COWORK_BACKEND_URL"}
    assert "hunter2" not in caught.value.message


@pytest.mark.parametrize("token", [None, "", "  ", "two words", "line\nbreak", 'quote"d', "ünï"])
def test_a_missing_or_malformed_token_names_the_variable_and_is_never_echoed(token: str | None) -> None:
    with pytest.raises(BackendConfigError) as caught:
        BackendConfig.from_environment(env(token=token))
    assert caught.value.variable == "COWORK_BACKEND_TOKEN"
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    if token and token.strip():
        assert token not in str(caught.value)
        assert token not in repr(caught.value)


def test_the_token_is_not_in_the_configs_repr() -> None:
    config = BackendConfig.from_environment(env())
    assert TOKEN not in repr(config)
    assert TOKEN not in str(config)


def test_config_errors_belong_to_the_one_backend_error_root() -> None:
    assert issubclass(BackendConfigError, BackendError)
    assert issubclass(services.BackendUnreachable, BackendError)
    assert issubclass(services.SessionGone, services.BackendRejected)
    assert services.BackendUnreachable.__mro__.index(BackendError) > 0


def test_the_public_surface_is_pinned() -> None:
    assert set(services.__all__) == {
        "DEFAULT_TIMEOUTS",
        "MAX_RESPONSE_BYTES",
        "POLICY_KEYS_VARIABLE",
        "REMOTE_TOOL_TIMEOUT_S",
        "SESSION_GONE_REASONS",
        "TOKEN_VARIABLE",
        "URL_VARIABLE",
        "USER_AGENT",
        "BackendClient",
        "BackendConfig",
        "BackendConfigError",
        "BackendError",
        "BackendRejected",
        "BackendTimeouts",
        "BackendUnreachable",
        "SessionGone",
        "is_loopback_host",
        "keys_from_environment",
        "keys_from_list",
        "verify_policy_bundle",
    }


# ---------------------------------------------------------------------------------- COWORK_POLICY_KEYS


def test_pinned_policy_keys_are_read_by_key_id() -> None:
    keys = [Ed25519PrivateKey.generate().public_key() for _ in range(2)]
    listed = [{"keyId": key_id(k), "publicKey": public_key_to_text(k)} for k in keys]
    trusted = keys_from_environment({"COWORK_POLICY_KEYS": json.dumps(listed)})
    assert trusted is not None
    assert list(trusted) == [key_id(k) for k in keys]
    assert [public_key_to_text(k) for k in trusted.values()] == [entry["publicKey"] for entry in listed]


@pytest.mark.parametrize("value", [None, "", "   "])
def test_no_pinned_keys_means_fetch_them(value: str | None) -> None:
    environ = {} if value is None else {"COWORK_POLICY_KEYS": value}
    assert keys_from_environment(environ) is None


@pytest.mark.parametrize(
    "value",
    [
        "not json",
        "{}",
        "[]",
        '[{"keyId": "k"}]',
        '[{"keyId": "k", "publicKey": 5}]',
        '[{"keyId": "k", "publicKey": "c2hvcnQ"}]',
        '[{"keyId": "k", "publicKey": "AAAA===="}]',
        '[{"keyId": "k", "publicKey": "x", "extra": 1}]',
        '[{"keyId": "k", "publicKey": "' + "A" * 43 + '", "algorithm": "RSA"}]',
    ],
)
def test_malformed_pinned_keys_are_an_error_naming_the_variable_never_a_silent_fetch(value: str) -> None:
    with pytest.raises(BackendConfigError) as caught:
        keys_from_environment({"COWORK_POLICY_KEYS": value})
    assert caught.value.variable == "COWORK_POLICY_KEYS"
    assert caught.value.message.startswith("COWORK_POLICY_KEYS ")
