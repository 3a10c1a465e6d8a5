"""The router (seed 003 §3, §5, §7.3): protocol, registry, dispatch, validation, artifacts, shutdown."""

from __future__ import annotations

import asyncio
import math
import os
from pathlib import Path
from typing import Any

import pytest

import agent_runtime.tool_runtime as tool_runtime
from agent_runtime.agent_host.routing import ToolRouter
from agent_runtime.tool_runtime import LocalToolRouter
from agent_runtime.tool_runtime.tools.file import ReadFileArguments
from contracts.enums import ArtifactType, ToolStatus
from contracts.errors import ErrorCode
from contracts.tools import ToolArtifact, ToolScope
from tests.agent_runtime.tool_runtime.support import call, failed_with, ok, wait_gone

SEED_DESCRIPTIONS = {
    "ReadFile": "Read the contents of a file at the given path",
    "WriteFile": "Create or overwrite a file with the given content",
    "DeleteFile": "Delete a file at the given path",
    "RunCommand": "Execute a shell command and return stdout, stderr, and exit code",
    "HttpRequest": "Make an HTTP request and return the response",
}


def test_the_router_is_a_tool_router_for_the_host(router: LocalToolRouter) -> None:
    assert isinstance(router, ToolRouter)


def test_the_public_surface_is_listed_and_importable() -> None:
    for name in tool_runtime.__all__:
        assert getattr(tool_runtime, name) is not None


def test_every_builtin_tool_is_offered_with_the_seeds_description(router: LocalToolRouter) -> None:
    definitions = {d.tool_name: d for d in router.get_available_tools()}
    # The seed's five, and the four that spare the agent a shell command for everyday work.
    assert set(definitions) == set(SEED_DESCRIPTIONS) | {"EditFile", "ListDirectory", "Glob", "Grep"}
    for name, description in SEED_DESCRIPTIONS.items():
        assert definitions[name].description.startswith(description)


def test_input_schemas_come_from_the_validation_models(router: LocalToolRouter) -> None:
    definitions = {d.tool_name: d for d in router.get_available_tools()}
    read = definitions["ReadFile"].input_schema
    assert read["required"] == ["path"]
    assert read["additionalProperties"] is False
    assert set(read["properties"]) == {"path", "offset", "limit", "encoding"}
    assert read["properties"]["offset"]["minimum"] == 1
    assert definitions["WriteFile"].input_schema["properties"]["createDirectories"]["default"] is True
    run = definitions["RunCommand"].input_schema["properties"]["timeout"]
    assert (run["minimum"], run["maximum"], run["default"]) == (1, 600, 300)
    assert "title" not in read
    assert set(read["properties"]) == {
        field.alias or name for name, field in ReadFileArguments.model_fields.items()
    }


def test_definitions_handed_out_cannot_change_the_routers_own(router: LocalToolRouter) -> None:
    router.get_available_tools()[0].input_schema["properties"].clear()
    assert router.get_available_tools()[0].input_schema["properties"]


async def test_an_unknown_tool_is_tool_not_found(router: LocalToolRouter) -> None:
    result = await router.execute(call("FormatDisk", path="/"))
    assert failed_with(result, ErrorCode.TOOL_NOT_FOUND)
    assert result.error is not None
    assert result.error.message == "Unknown tool: FormatDisk"
    assert (result.tool_name, result.tool_call_id, result.step_id) == ("FormatDisk", "call-1", "step-1")


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("ReadFile", {}, "arguments.path is required"),
        ("ReadFile", {"path": 5}, "arguments.path must be a string"),
        ("ReadFile", {"path": "/x", "offset": "5"}, "arguments.offset must be an integer"),
        ("ReadFile", {"path": "/x", "offset": 0}, "arguments.offset must be at least 1"),
        ("ReadFile", {"path": "/x", "limit": 1.5}, "arguments.limit must be an integer"),
        ("ReadFile", {"path": "/x", "lines": 3}, "arguments.lines is not a known field"),
        ("WriteFile", {"path": "/x"}, "arguments.content is required"),
        (
            "WriteFile",
            {"path": "/x", "content": "", "createDirectories": "yes"},
            "arguments.createDirectories must be true or false",
        ),
        ("RunCommand", {"command": "true", "timeout": 601}, "arguments.timeout must be at most 600"),
        ("RunCommand", {"command": "true", "timeout": 0}, "arguments.timeout must be at least 1"),
        ("RunCommand", {"command": ""}, "arguments.command must not be empty"),
        ("RunCommand", {"command": ["ls", "-l"]}, "arguments.command must be a string"),
        ("HttpRequest", {"url": "http://x.test", "method": "BREW"}, "arguments.method must be one of"),
        ("HttpRequest", {"url": "http://x.test", "headers": ["a"]}, "arguments.headers must be an object"),
        (
            "HttpRequest",
            {"url": "http://x.test", "headers": {"X-A": 1}},
            "arguments.headers.X-A must be a string",
        ),
        (
            "HttpRequest",
            {"url": "http://x.test", "headers": {"X-A": "1\r\nEvil: 1"}},
            "arguments.headers.X-A must not contain line breaks",
        ),
        (
            "HttpRequest",
            {"url": "http://x.test", "headers": {"Bad Name": "1"}},
            "arguments.headers.Bad Name is not a valid header name",
        ),
        (
            "HttpRequest",
            {"url": "http://x.test", "headers": {"Content-Length": "1"}},
            "arguments.headers.Content-Length is set by the client",
        ),
    ],
)
async def test_bad_arguments_are_invalid_request_naming_the_argument(
    router: LocalToolRouter, tool: str, arguments: dict[str, Any], message: str
) -> None:
    result = await router.execute(call(tool, **arguments))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith(message)


async def test_arguments_that_are_not_json_values_are_invalid_request(router: LocalToolRouter) -> None:
    result = await router.execute(call("ReadFile", path="/x", offset=math.nan))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    result = await router.execute(call("ReadFile", path=b"/etc/passwd"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)


async def test_the_scope_workspace_root_overrides_the_routers(
    router: LocalToolRouter, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    (other / "sub").mkdir(parents=True)
    escape = f"{other}/sub/../../workspace/x.txt"
    result = await router.execute(call("ReadFile", scope=ToolScope(workspace_root=str(other)), path=escape))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert "climbs out of the workspace" in result.error.message


async def test_a_relative_scope_workspace_root_is_invalid_request(router: LocalToolRouter) -> None:
    result = await router.execute(call("ReadFile", scope=ToolScope(workspace_root="ws"), path="/x"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("scope.workspaceRoot must be an absolute path")


async def test_the_scope_output_limit_applies_per_call(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "big.txt").write_text("a" * 5000)
    text = ok(
        await router.execute(
            call("ReadFile", scope=ToolScope(max_output_bytes=1000), path=str(workspace / "big.txt"))
        )
    )
    assert "[... truncated 4000 bytes ...]" in text
    assert ok(await router.execute(call("ReadFile", path=str(workspace / "big.txt")))) == "a" * 5000


async def test_released_artifacts_lose_their_files_and_foreign_paths_are_never_deleted(
    router: LocalToolRouter, workspace: Path, tmp_path: Path
) -> None:
    result = await router.execute(call("RunCommand", command="seq 1 20000"))
    artifact = result.artifacts[0]
    assert artifact.artifact_type is ArtifactType.TOOL_OUTPUT
    assert artifact.data_path is not None
    assert Path(artifact.data_path).is_file()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    foreign = ToolArtifact(artifact_type=ArtifactType.TOOL_OUTPUT, artifact_name="x", data_path=str(precious))
    router.release_artifacts([artifact, foreign])
    assert not Path(artifact.data_path).exists()
    assert precious.read_text() == "keep me"


async def test_closing_removes_the_spool_directory(workspace: Path, tmp_path: Path) -> None:
    tools = LocalToolRouter(workspace_root=workspace)
    result = await tools.execute(call("RunCommand", command="seq 1 20000"))
    assert result.artifacts[0].data_path is not None
    spool = Path(result.artifacts[0].data_path).parent
    assert spool.is_dir()
    await tools.aclose()
    assert not spool.exists()


async def test_closing_stops_a_running_command_and_later_calls_fail_cleanly(workspace: Path) -> None:
    tools = LocalToolRouter(workspace_root=workspace, kill_grace_seconds=0.5)
    fifo = workspace / "started"
    os.mkfifo(fifo)
    running = asyncio.ensure_future(
        tools.execute(call("RunCommand", command=f"echo $$ > {fifo}; exec sleep 300"))
    )
    # Opening the FIFO waits for the command to write its pid: no polling.
    pid = int(await asyncio.wait_for(asyncio.to_thread(fifo.read_text), 10))
    await tools.aclose()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert wait_gone([pid]) == []
    after = await tools.execute(call("ReadFile", path=str(workspace / "anything.txt")))
    assert failed_with(after, ErrorCode.TOOL_EXECUTION_FAILED)


async def test_a_bug_inside_a_tool_is_an_internal_error_without_its_text(
    router: LocalToolRouter, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_runtime.tool_runtime.tools.file import read

    def broken(*args: object) -> object:
        raise KeyError("secret internals")

    monkeypatch.setattr(read, "_read", broken)
    (workspace / "a.txt").write_text("x")
    result = await router.execute(call("ReadFile", path=str(workspace / "a.txt")))
    assert failed_with(result, ErrorCode.INTERNAL_ERROR)
    assert result.error is not None
    assert "secret" not in result.error.message
    assert result.status is ToolStatus.FAILED
