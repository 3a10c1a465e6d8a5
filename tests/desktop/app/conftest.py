"""Fixtures of the window tests: one real local backend for the module tree, a project folder, and an
environment whose platform folders (settings, logs, data) are the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.backend import Backend, start_backend


@pytest.fixture(scope="session")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with start_backend(tmp_path_factory.mktemp("window-backend")) as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    return project


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """platformdirs' folders under the test's own: settings, logs and data never touch the user's."""
    root = tmp_path / "home"
    for variable, folder in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        (root / folder).mkdir(parents=True)
        monkeypatch.setenv(variable, str(root / folder))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for name in (
        "COWORK_BACKEND_URL",
        "COWORK_BACKEND_TOKEN",
        "COWORK_POLICY_KEYS",
        "COWORK_RUNTIME_EXECUTABLE",
    ):
        monkeypatch.delenv(name, raising=False)
    for name in ("LLM_GATEWAY_ENDPOINT", "LLM_GATEWAY_API", "LLM_GATEWAY_MODEL", "LLM_GATEWAY_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return root
