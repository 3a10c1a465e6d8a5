"""Fixtures: a project folder and an outside folder in tmp, the real tool runtime, a dispatch on them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_runtime.agent_host.routing import ToolDispatch, ToolTimeouts
from agent_runtime.tool_runtime import LocalToolRouter
from tests.agent_runtime.agent_host.routing.support import FakeUploader


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    root = tmp_path / "outside"
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
def uploader() -> FakeUploader:
    return FakeUploader()


@pytest.fixture
def upload_failures() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def dispatch(
    router: LocalToolRouter, workspace: Path, uploader: FakeUploader, upload_failures: list[tuple[str, str]]
) -> ToolDispatch:
    return ToolDispatch(
        router,
        workspace_roots=[str(workspace)],
        uploader=uploader,
        on_upload_failed=lambda name, reason: upload_failures.append((name, reason)),
        timeouts=ToolTimeouts(),
    )
