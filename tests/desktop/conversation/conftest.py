"""A real local backend for the history client's tests (its own data folder: a clean slate)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.backend import Backend, start_backend


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with start_backend(tmp_path_factory.mktemp("history-backend")) as running:
        yield running
