"""backend.toml: how much artifact content the local store keeps in its database."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.common.config_file import MAX_INLINE_CONTENT_BYTES, ConfigError, load_settings
from backend.common.settings import Settings
from backend.storage.local import DEFAULT_INLINE_CONTENT_LIMIT


def _settings(tmp_path: Path, text: str) -> Settings:
    (tmp_path / "backend.toml").write_text(text)
    return load_settings(tmp_path)


def test_inline_content_defaults_to_256_kib_as_the_local_store_does() -> None:
    assert load_settings(None).inline_content_bytes == 256 * 1024 == DEFAULT_INLINE_CONTENT_LIMIT


@pytest.mark.parametrize("value", [0, 1, 65536, MAX_INLINE_CONTENT_BYTES])
def test_inline_content_can_be_set_or_turned_off(tmp_path: Path, value: int) -> None:
    settings = _settings(tmp_path, f"[workspaces]\ninlineContentBytes = {value}\n")
    assert settings.inline_content_bytes == value


@pytest.mark.parametrize("value", ["-1", str(MAX_INLINE_CONTENT_BYTES + 1), '"64k"', "1.5", "true"])
def test_an_unusable_inline_content_size_is_a_clear_error(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match="inlineContentBytes"):
        _settings(tmp_path, f"[workspaces]\ninlineContentBytes = {value}\n")


def test_the_backend_tool_service_budget_is_120_s_and_loopback_fetches_are_off_by_default(
    tmp_path: Path,
) -> None:
    default = load_settings(None)
    assert (default.tool_timeout.total_seconds(), default.web_fetch_allow_loopback) == (120, False)
    settings = _settings(tmp_path, "[tools]\ntimeoutSeconds = 30\nwebFetchAllowLoopback = true\n")
    assert (settings.tool_timeout.total_seconds(), settings.web_fetch_allow_loopback) == (30, True)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('webFetchAllowLoopback = "yes"', "webFetchAllowLoopback must be true or false"),
        ("timeoutSeconds = 0", "timeoutSeconds"),
        ("allowPrivate = true", "unknown key: allowPrivate"),
    ],
)
def test_unusable_tool_settings_are_clear_errors(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        _settings(tmp_path, f"[tools]\n{text}\n")
