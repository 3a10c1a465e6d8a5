"""Fixtures shared by the tests that drive the real tool runtime: a temp-dir workspace and a router on it.

A ``conftest.py`` that wants them imports them by name.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_runtime.tool_runtime import LocalToolRouter


def new_folder(parent: Path, name: str) -> Path:
    """A new empty folder ``parent/name``, by its real path."""
    folder = parent / name
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return new_folder(tmp_path, "workspace")


@pytest.fixture
def spool_dir(tmp_path: Path) -> Path:
    return tmp_path / "spool"


@pytest.fixture
async def router(workspace: Path, spool_dir: Path) -> AsyncIterator[LocalToolRouter]:
    tools = LocalToolRouter(workspace_root=workspace, spool_dir=spool_dir, kill_grace_seconds=0.5)
    yield tools
    await tools.aclose()
