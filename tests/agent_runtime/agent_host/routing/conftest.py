"""Fixtures: a workspace folder and an outside folder in tmp, the real tool runtime, a dispatch on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_runtime.agent_host.routing import ToolDispatch, ToolTimeouts
from agent_runtime.tool_runtime import LocalToolRouter
from tests.agent_runtime.agent_host.routing.support import FakeUploader
from tests.agent_runtime.tool_runtime.fixtures import new_folder, router, spool_dir, workspace

__all__ = ["dispatch", "outside", "router", "spool_dir", "upload_failures", "uploader", "workspace"]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return new_folder(tmp_path, "outside")


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
