"""Fixtures: a temp-dir workspace, a router on it, a local HTTP server on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from tests.agent_runtime.tool_runtime.support import LocalHTTPServer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def spool_dir(tmp_path: Path) -> Path:
    return tmp_path / "spool"


@pytest.fixture
async def router(workspace: Path, spool_dir: Path) -> AsyncIterator[LocalToolRouter]:
    tools = LocalToolRouter(workspace_root=workspace, spool_dir=spool_dir, kill_grace_seconds=0.5)
    yield tools
    await tools.aclose()


@pytest.fixture
def http_server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as server:
        yield server
