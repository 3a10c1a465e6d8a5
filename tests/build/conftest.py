"""Fixtures of the release tooling's tests: the linux-x86_64 bundle unpacked once per test session
(built or reused by :func:`tests.build.bundle.linux_bundle`) and one real local backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.build.bundle import linux_bundle, unpack
from tests.support.backend import Backend, start_backend


@pytest.fixture(scope="session")
def bundle() -> Path:
    return linux_bundle()


@pytest.fixture(scope="session")
def frozen_runtime(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runtime program of the unpacked bundle."""
    return unpack(bundle, tmp_path_factory.mktemp("frozen"))


@pytest.fixture(scope="session")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with start_backend(tmp_path_factory.mktemp("release-backend")) as running:
        yield running
