"""Whether and where the app checks for runtime updates: ``update.json`` beside the installed app,
``COWORK_UPDATE_MANIFEST_URL`` and ``COWORK_UPDATE_CHANNEL``; every invalid value turns checks off
with a message naming it, never an exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from contracts.release import Channel
from desktop.updater.active import update_config_file
from desktop.updater.config import CHANNELS, UpdateConfig, UpdatesOff, update_config

URL = "https://releases.example.com/agent-runtime/manifest.json"


def settings_file(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "update.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_from_source_the_app_checks_only_when_the_variable_names_a_manifest(tmp_path: Path) -> None:
    missing = tmp_path / "update.json"
    off = update_config({}, frozen=False, config_file=missing)
    assert off == UpdatesOff("running from source and COWORK_UPDATE_MANIFEST_URL is not set")

    config = update_config({"COWORK_UPDATE_MANIFEST_URL": URL}, frozen=False, config_file=missing)
    assert config == UpdateConfig(URL, "stable", "COWORK_UPDATE_MANIFEST_URL")
    beta = update_config(
        {"COWORK_UPDATE_MANIFEST_URL": " http://127.0.0.1:8000/m.json ", "COWORK_UPDATE_CHANNEL": "beta"},
        frozen=False,
        config_file=missing,
    )
    assert beta == UpdateConfig("http://127.0.0.1:8000/m.json", "beta", "COWORK_UPDATE_MANIFEST_URL")


def test_the_installed_app_reads_the_installers_file_and_the_variables_override_it(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"manifestUrl": URL, "channel": "beta", "addedLater": 1})
    assert update_config({}, frozen=True, config_file=path) == UpdateConfig(URL, "beta", str(path))

    overridden = update_config(
        {
            "COWORK_UPDATE_MANIFEST_URL": "https://mirror.example.org/m.json",
            "COWORK_UPDATE_CHANNEL": "stable",
        },
        frozen=True,
        config_file=path,
    )
    assert overridden == UpdateConfig(
        "https://mirror.example.org/m.json", "stable", "COWORK_UPDATE_MANIFEST_URL"
    )
    # The channel of the file stays when only the URL is overridden; no channel means stable.
    assert update_config({"COWORK_UPDATE_MANIFEST_URL": URL}, frozen=True, config_file=path).channel == "beta"
    plain = settings_file(tmp_path, {"manifestUrl": URL})
    assert update_config({}, frozen=True, config_file=plain) == UpdateConfig(URL, "stable", str(plain))


def test_an_installation_without_the_file_does_not_check(tmp_path: Path) -> None:
    off = update_config(
        {"COWORK_UPDATE_MANIFEST_URL": "  "}, frozen=True, config_file=tmp_path / "update.json"
    )
    assert isinstance(off, UpdatesOff)
    assert not off.invalid
    assert str(tmp_path / "update.json") in off.reason


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "is not valid JSON"),
        ('["https://example.com/m.json"]', "must hold an object"),
        ({"channel": "beta"}, "has no manifestUrl"),
        ({"manifestUrl": 42}, "has no manifestUrl"),
        ({"manifestUrl": URL, "channel": 2}, "channel must be a string"),
        ({"manifestUrl": URL, "channel": "nightly"}, "update channel 'nightly'"),
        ({"manifestUrl": "ftp://example.com/m.json"}, "is not an http(s) URL"),
        ({"manifestUrl": "releases.example.com/m.json"}, "is not an http(s) URL"),
        ({"manifestUrl": "https:///m.json"}, "names no host"),
        ({"manifestUrl": "https://example.com:port/m.json"}, "is not a URL"),
        ({"manifestUrl": "https://example.com/a b.json"}, "contains spaces"),
        ("x" * 70_000, "larger than 64 KiB"),
    ],
)
def test_a_bad_file_turns_checks_off_and_says_what_is_wrong(
    tmp_path: Path, content: object, says: str
) -> None:
    path = settings_file(tmp_path, content)
    off = update_config({}, frozen=True, config_file=path)
    assert isinstance(off, UpdatesOff)
    assert off.invalid
    assert says in off.reason
    assert str(path) in off.reason


def test_bad_variables_turn_checks_off_and_name_the_variable(tmp_path: Path) -> None:
    missing = tmp_path / "update.json"
    off = update_config(
        {"COWORK_UPDATE_MANIFEST_URL": "file:///etc/passwd"}, frozen=False, config_file=missing
    )
    assert isinstance(off, UpdatesOff)
    assert off.invalid
    assert off.reason == (
        "the release manifest URL 'file:///etc/passwd' from COWORK_UPDATE_MANIFEST_URL is not an http(s) URL"
    )
    off = update_config(
        {"COWORK_UPDATE_MANIFEST_URL": URL, "COWORK_UPDATE_CHANNEL": "Beta"},
        frozen=False,
        config_file=missing,
    )
    assert off == UpdatesOff(
        "the update channel 'Beta' from COWORK_UPDATE_CHANNEL is not one of stable, beta", invalid=True
    )


def test_an_unreadable_file_is_reported_not_raised(tmp_path: Path) -> None:
    directory = tmp_path / "update.json"
    directory.mkdir()
    off = update_config({}, frozen=True, config_file=directory)
    assert isinstance(off, UpdatesOff)
    assert off.invalid
    assert "cannot be read" in off.reason


def test_the_file_lives_beside_the_app_or_in_its_macos_resources() -> None:
    assert update_config_file("/opt/Cowork/cowork") == Path("/opt/Cowork/update.json")
    assert update_config_file("/Applications/Cowork.app/Contents/MacOS/Cowork") == Path(
        "/Applications/Cowork.app/Contents/Resources/update.json"
    )


def test_the_channels_are_the_manifests() -> None:
    assert get_args(Channel) == CHANNELS
