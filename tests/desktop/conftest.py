"""Fixtures of the desktop tests: a qasync loop per test, and test peers that never outlive it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from tests.desktop.support import Peers, Run, qasync_runner


@pytest.fixture
def run(qapp: QApplication) -> Iterator[Run[Any]]:
    with qasync_runner(qapp) as runner:
        yield runner


@pytest.fixture
def peers() -> Iterator[Peers]:
    started = Peers()
    yield started
    started.stop_all()
