"""Every settings test runs against an in-memory keychain: the real OS keychain is never touched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

from desktop.settings.store import SettingsStore


class MemoryKeyring(KeyringBackend):
    """A keychain that lives in a dict, so a test can look inside it."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("no such password")


@pytest.fixture(autouse=True)
def keychain() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    try:
        yield memory
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    return tmp_path / "config" / "Cowork" / "settings.json"


@pytest.fixture
def store(settings_file: Path) -> SettingsStore:
    return SettingsStore(settings_file)
