"""Artifact upload after a tool ran (seed 000 §7.5), through the real tool runtime and its spool."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agent_runtime.agent_host.routing import MAX_UPLOAD_BYTES, ToolDispatch
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ArtifactType, ToolStatus
from contracts.errors import ErrorCode
from contracts.tools import ToolResult
from tests.agent_runtime.agent_host.routing.support import IDS, FakeUploader, Unreachable, tool_call

BIG = 20_000
PRINT_BIG = f"head -c {BIG} /dev/zero | tr '\\0' a"


def spooled(spool_dir: Path) -> list[Path]:
    return sorted(spool_dir.iterdir()) if spool_dir.exists() else []


async def run_big_command(
    router: LocalToolRouter,
    workspace: Path,
    uploader: FakeUploader | None,
    failures: list[tuple[str, str]] | None = None,
    max_upload_bytes: int = MAX_UPLOAD_BYTES,
) -> ToolResult:
    dispatch = ToolDispatch(
        router,
        workspace_roots=[str(workspace)],
        uploader=uploader,
        on_upload_failed=None if failures is None else lambda n, r: failures.append((n, r)),
        max_upload_bytes=max_upload_bytes,
    )
    prepared = dispatch.prepare(tool_call("RunCommand", command=PRINT_BIG), **IDS)
    return await dispatch.execute(prepared, workspace_id="ws-1", scope=None, **IDS)


async def test_a_large_command_output_is_uploaded_whole_and_its_spool_file_released(
    router: LocalToolRouter, workspace: Path, spool_dir: Path, uploader: FakeUploader
) -> None:
    result = await run_big_command(router, workspace, uploader)
    assert result.status is ToolStatus.SUCCEEDED
    ((request, content),) = uploader.uploads
    assert request.artifact_type is ArtifactType.TOOL_OUTPUT
    assert content == b"a" * BIG
    assert result.artifact_uris == ["cowork://workspaces/ws-1/artifacts/art_1"]
    assert result.artifacts == []
    assert spooled(spool_dir) == []
    # The model still sees the bounded text, not the 20 KB.
    assert result.output_text is not None
    assert len(result.output_text) < BIG + 200


async def test_a_failed_upload_is_reported_logged_and_the_result_and_release_still_happen(
    router: LocalToolRouter, workspace: Path, spool_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    failures: list[tuple[str, str]] = []
    with caplog.at_level(logging.WARNING, logger="agent_runtime.agent_host.routing"):
        result = await run_big_command(router, workspace, FakeUploader(fail_with=Unreachable()), failures)
    assert result.status is ToolStatus.SUCCEEDED
    assert result.artifact_uris == []
    assert result.artifacts == []
    ((name, reason),) = failures
    assert name
    assert ErrorCode.WORKSPACE_UPLOAD_FAILED.value in reason
    assert any(record.levelno == logging.WARNING for record in caplog.records)
    assert spooled(spool_dir) == []


async def test_without_an_uploader_artifacts_are_released_and_dropped(
    router: LocalToolRouter, workspace: Path, spool_dir: Path
) -> None:
    result = await run_big_command(router, workspace, None)
    assert result.status is ToolStatus.SUCCEEDED
    assert result.artifacts == []
    assert result.artifact_uris == []
    assert spooled(spool_dir) == []


async def test_an_artifact_past_the_upload_cap_is_cut_and_the_result_says_so(
    router: LocalToolRouter, workspace: Path, uploader: FakeUploader
) -> None:
    result = await run_big_command(router, workspace, uploader, max_upload_bytes=12_000)
    ((_, content),) = uploader.uploads
    assert content == b"a" * 12_000
    assert result.output_text is not None
    assert f"cut to its first 12,000 of {BIG:,} bytes" in result.output_text
