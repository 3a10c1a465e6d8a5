"""Fixtures of the process tests: one real local backend for the module tree, a project folder, and
folders for the runtime's data and logs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.backend import Backend, start_backend


@pytest.fixture(scope="session")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with start_backend(tmp_path_factory.mktemp("desktop-backend")) as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    return project
