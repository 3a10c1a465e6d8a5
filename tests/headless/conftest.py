"""Fixtures of the ``cowork exec`` tests: one real local backend for the whole module tree, a project
folder, an environment that keeps everything (platformdirs, the runtime's data) in temporary folders,
and a scripted gateway serving each test's turns from a thread of the test process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.headless.support import Backend, base_environment, start_backend


@pytest.fixture(scope="session")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with start_backend(tmp_path_factory.mktemp("headless-backend")) as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    return project


@pytest.fixture
def env(tmp_path: Path, backend: Backend) -> dict[str, str]:
    """``cowork exec``'s environment: the test backend, the runtime's data in ``tmp_path``."""
    return base_environment(tmp_path, backend)
