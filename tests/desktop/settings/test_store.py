"""The settings store without Qt: the file cowork exec reads, tokens only in the keychain, validation."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from keyring.backends import fail

from desktop.launch.errors import LaunchError
from desktop.launch.gateway import DEMO_MODEL, KEYRING_SERVICE, resolve_gateway, saved_choice_is_demo
from desktop.settings.presets import PRESETS, preset_named
from desktop.settings.store import (
    BACKEND_KEYRING_SERVICE,
    AppSettings,
    KeychainError,
    SettingsError,
    SettingsStore,
    parse_max_steps,
    validate,
)
from tests.desktop.settings.conftest import MemoryKeyring

TOKEN = "sk-ant-api03-NOT-IN-ANY-FILE-9f8e7d"
ANTHROPIC = AppSettings(
    preset="anthropic",
    endpoint="https://api.anthropic.com",
    api="anthropic",
    model="claude-sonnet-4-5",
    backend_url="",
    approval_mode="always",
    max_steps=25,
)


def every_file_under(root: Path) -> bytes:
    return b"".join(path.read_bytes() for path in root.rglob("*") if path.is_file())


def test_nothing_saved_means_defaults_and_not_configured(store: SettingsStore) -> None:
    assert store.load() == AppSettings()
    assert not store.is_configured()
    assert store.token() is None
    assert store.backend_token() is None


def test_settings_round_trip_and_the_token_lives_only_in_the_keychain(
    store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    store.save(ANTHROPIC, TOKEN)

    assert store.load() == ANTHROPIC
    assert store.is_configured()
    assert store.token() == TOKEN
    assert keychain.entries == {(KEYRING_SERVICE, "https://api.anthropic.com"): TOKEN}
    assert TOKEN.encode() not in every_file_under(settings_file.parent.parent)
    assert json.loads(settings_file.read_text()) == {
        "version": 1,
        "gateway": {
            "preset": "anthropic",
            "api": "anthropic",
            "model": "claude-sonnet-4-5",
            "endpoint": "https://api.anthropic.com",
        },
        "backend": {"url": ""},
        "tasks": {"approvalMode": "always", "maxSteps": 25},
    }


def test_cowork_exec_resolves_the_gateway_the_store_saved(store: SettingsStore, settings_file: Path) -> None:
    store.save(ANTHROPIC, TOKEN)
    gateway = resolve_gateway({}, settings_file=settings_file)
    assert (gateway.endpoint, gateway.api, gateway.model, gateway.token, gateway.demo) == (
        "https://api.anthropic.com",
        "anthropic",
        "claude-sonnet-4-5",
        TOKEN,
        False,
    )
    # The environment still wins for cowork exec, as its help says.
    overridden = resolve_gateway(
        {"LLM_GATEWAY_ENDPOINT": "http://localhost:11434/v1", "LLM_GATEWAY_API": "openai"},
        settings_file=settings_file,
    )
    assert (overridden.endpoint, overridden.api, overridden.token) == (
        "http://localhost:11434/v1",
        "openai",
        None,
    )


def test_a_token_is_only_ever_read_for_the_endpoint_it_was_saved_for(store: SettingsStore) -> None:
    store.save(ANTHROPIC, TOKEN)
    proxy = AppSettings(preset="litellm", endpoint="http://localhost:4000", api="openai", model="gpt-4o")
    store.save(proxy, None)
    assert store.token() is None  # the Anthropic key is not handed to the proxy
    store.save(ANTHROPIC, None)
    assert store.token() == TOKEN  # and comes back with its endpoint


def test_none_keeps_the_token_and_empty_removes_it(store: SettingsStore, keychain: MemoryKeyring) -> None:
    store.save(ANTHROPIC, TOKEN)
    store.save(ANTHROPIC, None)
    assert store.token() == TOKEN
    store.save(ANTHROPIC, "")
    assert store.token() is None
    assert keychain.entries == {}
    store.save(ANTHROPIC, "")  # removing what is not there is fine
    assert store.token() is None


def test_the_demo_model_is_saved_without_an_endpoint_or_token(
    store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    store.save(AppSettings(preset="demo", endpoint="https://ignored.example", model="x"), "ignored-token")
    settings = store.load()
    assert settings.is_demo
    assert (settings.endpoint, settings.api, settings.model) == ("", "anthropic", DEMO_MODEL)
    assert store.is_configured()
    assert store.token() is None
    assert keychain.entries == {}
    assert "endpoint" not in json.loads(settings_file.read_text())["gateway"]
    with pytest.raises(LaunchError, match="offline demo model: run cowork exec with --demo"):
        resolve_gateway({}, settings_file=settings_file)
    # cowork exec starts the demo model itself then, unless a gateway is named some other way.
    assert saved_choice_is_demo({}, settings_file=settings_file)
    assert not saved_choice_is_demo({}, endpoint="http://127.0.0.1:1", settings_file=settings_file)
    assert not saved_choice_is_demo({"LLM_GATEWAY_ENDPOINT": "http://x"}, settings_file=settings_file)
    store.save(ANTHROPIC, None)
    assert not saved_choice_is_demo({}, settings_file=settings_file)


def test_a_backend_token_goes_to_the_keychain_under_the_backend_url(
    store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    backend = AppSettings(**{**ANTHROPIC.__dict__, "backend_url": "https://cowork.example.com"})
    store.save(backend, None, backend_token="eyJhbGciOiJFZERTQSJ9.e30.c2ln")
    assert store.load().backend_url == "https://cowork.example.com"
    assert store.backend_token() == "eyJhbGciOiJFZERTQSJ9.e30.c2ln"
    assert keychain.entries == {
        (BACKEND_KEYRING_SERVICE, "https://cowork.example.com"): "eyJhbGciOiJFZERTQSJ9.e30.c2ln"
    }
    assert b"eyJhbGciOiJFZERTQSJ9" not in settings_file.read_bytes()


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"endpoint": "ftp://api.example.com"}, "endpoint", "must be an http:// or https:// URL"),
        ({"endpoint": "https://"}, "endpoint", "must be an http:// or https:// URL"),
        ({"endpoint": "api.anthropic.com"}, "endpoint", "must be an http:// or https:// URL"),
        ({"endpoint": "https://api.example .com"}, "endpoint", "must be an http:// or https:// URL"),
        ({"endpoint": "https://host:99999"}, "endpoint", "must be an http:// or https:// URL"),
        ({"endpoint": "https://me:sk-secret@api.example.com"}, "endpoint", "must not contain a user name or"),
        ({"endpoint": ""}, "endpoint", "must be an http:// or https:// URL"),
        ({"api": "gemini"}, "api", "must be anthropic or openai"),
        ({"model": ""}, "model", "Enter the model to call"),
        ({"model": "claude sonnet"}, "model", "has no spaces"),
        ({"backend_url": "localhost:8000"}, "backend_url", "Leave it empty for the local backend"),
        ({"approval_mode": "sometimes"}, "approval_mode", "must be on_risky_actions, always or never"),
        ({"max_steps": 0}, "max_steps", "whole number from 1 to 1000"),
        ({"max_steps": 1001}, "max_steps", "whole number from 1 to 1000"),
        ({"max_steps": True}, "max_steps", "whole number from 1 to 1000"),
        ({"preset": "gemini"}, "preset", "Choose one of the presets"),
    ],
)
def test_unusable_settings_are_refused_with_a_clear_message_and_nothing_is_written(
    store: SettingsStore,
    settings_file: Path,
    keychain: MemoryKeyring,
    change: dict[str, object],
    field: str,
    message: str,
) -> None:
    bad = AppSettings(**{**ANTHROPIC.__dict__, **change})
    with pytest.raises(SettingsError) as raised:
        store.save(bad, TOKEN)
    assert list(raised.value.problems) == [field]
    assert message in raised.value.problems[field]
    assert not settings_file.exists()
    assert keychain.entries == {}


def test_every_problem_is_reported_at_once(store: SettingsStore) -> None:
    bad = AppSettings(preset="custom", endpoint="nope", api="openai", model="", max_steps=-1)
    with pytest.raises(SettingsError) as raised:
        store.save(bad, "two words")
    assert set(raised.value.problems) == {"endpoint", "model", "max_steps", "token"}


@pytest.mark.parametrize(
    ("text", "steps"), [("", None), ("  ", None), ("40", 40), (" 7 ", 7), ("1000", 1000)]
)
def test_max_steps_as_typed(text: str, steps: int | None) -> None:
    assert parse_max_steps(text) == steps


@pytest.mark.parametrize("text", ["abc", "0", "-3", "2.5", "1001", "1e3", "40 steps"])
def test_max_steps_that_are_not_a_positive_whole_number_are_refused(text: str) -> None:
    with pytest.raises(SettingsError) as raised:
        parse_max_steps(text)
    assert raised.value.problems == {
        "max_steps": "Max steps must be a whole number from 1 to 1000, or empty for the default (40)."
    }


def test_a_keychain_that_fails_saves_nothing_and_says_why(store: SettingsStore, settings_file: Path) -> None:
    import keyring

    keyring.set_keyring(fail.Keyring())  # the conftest fixture restores the memory keychain after
    with pytest.raises(KeychainError) as raised:
        store.save(ANTHROPIC, TOKEN)
    assert "never writes tokens to a file" in raised.value.problems["token"]
    assert "LLM_GATEWAY_AUTH_TOKEN" in raised.value.problems["token"]
    assert not settings_file.exists()
    assert store.token() is None  # a missing keychain reads as "no token", not a crash
    store.save(ANTHROPIC, None)  # settings without a new token still save
    assert store.load() == ANTHROPIC


def test_keys_another_version_wrote_are_kept(store: SettingsStore, settings_file: Path) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(
        json.dumps({"updater": {"channel": "beta"}, "gateway": {"endpoint": "http://x", "future": 1}})
    )
    store.save(ANTHROPIC, None)
    data = json.loads(settings_file.read_text())
    assert data["updater"] == {"channel": "beta"}
    assert data["gateway"]["future"] == 1
    assert data["gateway"]["endpoint"] == "https://api.anthropic.com"


def test_a_hand_written_gateway_counts_as_custom(store: SettingsStore, settings_file: Path) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('{"gateway": {"endpoint": "http://localhost:4000", "api": "OpenAI"}}')
    settings = store.load()
    assert (settings.preset, settings.endpoint, settings.api) == ("custom", "http://localhost:4000", "openai")
    assert store.is_configured()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "does not hold an object"),
        ('{"tasks": {"maxSteps": "40"}}', "has tasks.maxSteps that is not a whole number"),
        ('{"gateway": {"model": 7}}', "has gateway.model that is not a string"),
        ('{"gateway": "anthropic"}', "has gateway that is not an object"),
    ],
)
def test_an_unreadable_file_is_reported_and_kept_aside_when_saving_over_it(
    store: SettingsStore, settings_file: Path, content: str, message: str
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(content)
    with pytest.raises(SettingsError) as raised:
        store.load()
    assert message in raised.value.problems["file"]
    assert (
        str(settings_file) in raised.value.problems["file"]
        or "settings file's" in raised.value.problems["file"]
    )
    assert not store.is_configured()

    store.save(ANTHROPIC, None)
    assert store.load() == ANTHROPIC
    kept = [path for path in settings_file.parent.iterdir() if ".unreadable-" in path.name]
    if content.startswith(("{not", "[")):
        assert [path.read_text() for path in kept] == [content]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_the_file_is_owner_only_and_no_temporary_file_is_left(
    store: SettingsStore, settings_file: Path
) -> None:
    store.save(ANTHROPIC, TOKEN)
    store.save(ANTHROPIC, None)
    assert stat.S_IMODE(os.stat(settings_file).st_mode) == 0o600
    assert [path.name for path in settings_file.parent.iterdir()] == ["settings.json"]


def test_every_preset_is_valid_as_it_comes() -> None:
    for preset in PRESETS:
        validate(AppSettings(preset=preset.id, endpoint=preset.endpoint, api=preset.api, model=preset.model))
    assert [p.id for p in PRESETS] == ["anthropic", "openai", "ollama", "litellm", "demo"]
    demo = preset_named("demo")
    assert demo is not None
    assert "not a real LLM" in demo.name
    assert preset_named("custom") is None
