"""``ToolDispatch.prepare`` (seed 000 §7.3 steps 1–2; §8.2–§8.3): capability, resolved paths, facts,
target — and nothing the model writes makes it crash."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.policy import Allowed, Denied, PolicyEnforcer
from agent_runtime.agent_host.routing import ToolDispatch
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ApprovalMode, Capability, OsFamily
from contracts.errors import ErrorCode
from tests.agent_runtime.agent_host.policy.bundles import NOW, bundle_json
from tests.agent_runtime.agent_host.routing.support import IDS, tool_call
from tests.agent_runtime.tool_runtime.support import failed_with


def test_only_tools_with_granted_capabilities_are_offered(dispatch: ToolDispatch) -> None:
    offered = dispatch.available_tools({Capability.FILE_READ, Capability.SHELL_EXEC, Capability.LLM_CALL})
    assert [d.tool_name for d in offered] == ["ReadFile", "ListDirectory", "Glob", "Grep", "RunCommand"]
    assert dispatch.available_tools(set()) == []
    everything = dispatch.available_tools(set(Capability))
    assert {d.tool_name for d in everything} == {
        "ReadFile",
        "WriteFile",
        "DeleteFile",
        "EditFile",
        "ListDirectory",
        "Glob",
        "Grep",
        "RunCommand",
        "HttpRequest",
    }


def test_an_unknown_tool_fails_with_tool_not_found_listing_the_known_ones(dispatch: ToolDispatch) -> None:
    prepared = dispatch.prepare(tool_call("FormatDisk", path="/"), **IDS)
    assert prepared.capability is None
    assert failed_with(prepared.failure, ErrorCode.TOOL_NOT_FOUND)
    assert prepared.failure is not None
    assert prepared.failure.error is not None
    message = prepared.failure.error.message
    assert "FormatDisk" in message
    for known in ("ReadFile", "WriteFile", "DeleteFile", "RunCommand", "HttpRequest"):
        assert known in message
    assert prepared.failure.tool_call_id == "call-1"
    assert prepared.failure.task_id == "task-1"


def test_upload_artifact_is_not_routed_to_the_tool_runtime(dispatch: ToolDispatch) -> None:
    prepared = dispatch.prepare(tool_call("UploadArtifact", artifactName="x"), **IDS)
    assert failed_with(prepared.failure, ErrorCode.TOOL_NOT_FOUND)


def test_a_relative_path_resolves_against_the_first_workspace_root(
    router: LocalToolRouter, workspace: Path, outside: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    dispatch = ToolDispatch(router, workspace_roots=[str(workspace), str(outside)], uploader=None)
    prepared = dispatch.prepare(tool_call("ReadFile", path="src/app.py", limit=3), **IDS)
    expected = str(workspace / "src" / "app.py")
    assert prepared.failure is None
    assert prepared.capability is Capability.FILE_READ
    assert prepared.call.arguments == {"path": expected, "limit": 3}
    assert prepared.facts.resolved_path == expected
    assert prepared.facts.file_size == len("print('hi')\n")
    assert prepared.facts.workspace_roots == (str(workspace), str(outside))
    assert prepared.target == expected


def test_the_models_original_call_is_not_mutated(dispatch: ToolDispatch) -> None:
    call = tool_call("ReadFile", path="notes.txt")
    dispatch.prepare(call, **IDS)
    assert call.arguments == {"path": "notes.txt"}


def test_dot_dot_inside_the_workspace_is_resolved(dispatch: ToolDispatch, workspace: Path) -> None:
    (workspace / "src").mkdir()
    prepared = dispatch.prepare(tool_call("WriteFile", path="src/../README.md", content="x"), **IDS)
    assert prepared.failure is None
    assert prepared.call.arguments["path"] == str(workspace / "README.md")
    assert prepared.facts.file_size is None  # does not exist yet


def test_dot_dot_climbing_out_of_the_workspace_is_refused(dispatch: ToolDispatch, workspace: Path) -> None:
    for path in ("../outside/secret.txt", f"{workspace}/../outside/secret.txt", "src/../../x"):
        prepared = dispatch.prepare(tool_call("ReadFile", path=path), **IDS)
        assert failed_with(prepared.failure, ErrorCode.INVALID_REQUEST), path
        assert prepared.failure is not None
        assert prepared.failure.error is not None
        assert "arguments.path" in prepared.failure.error.message


def test_dot_dot_after_a_symlink_follows_the_link_like_the_os(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (outside / "deep").mkdir()
    (workspace / "link").symlink_to(outside / "deep")
    # Lexically "link/../x" is inside the project; the OS goes through the link to outside/x.
    prepared = dispatch.prepare(tool_call("ReadFile", path="link/../x"), **IDS)
    assert failed_with(prepared.failure, ErrorCode.INVALID_REQUEST)


def test_a_symlink_inside_the_workspace_pointing_outside_yields_the_outside_real_path(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (outside / "secret.txt").write_text("s3cr3t")
    (workspace / "innocent.txt").symlink_to(outside / "secret.txt")
    prepared = dispatch.prepare(tool_call("ReadFile", path="innocent.txt"), **IDS)
    real = str(outside / "secret.txt")
    assert prepared.failure is None
    assert prepared.facts.resolved_path == real
    assert prepared.call.arguments["path"] == real
    assert prepared.facts.file_size == len("s3cr3t")


def test_the_policy_blocks_a_symlink_escape_that_prepare_resolved(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (outside / "secret.txt").write_text("s3cr3t")
    (workspace / "innocent.txt").symlink_to(outside / "secret.txt")
    (workspace / "fine.txt").write_text("ok")
    policy = PolicyEnforcer.load(
        bundle_json({"name": "File.Read", "allowedPaths": [str(workspace)]}),
        session_id="sess_1",
        now=NOW,
        os_family=OsFamily.LINUX,
    )

    def check(path: str) -> object:
        prepared = dispatch.prepare(tool_call("ReadFile", path=path), **IDS)
        assert prepared.capability is not None
        return policy.check(prepared.facts, prepared.capability, now=NOW, approval_mode=ApprovalMode.NEVER)

    assert isinstance(check("innocent.txt"), Denied)
    assert isinstance(check(str(workspace / "innocent.txt")), Denied)
    assert isinstance(check("fine.txt"), Allowed)


def test_a_path_through_a_symlinked_directory_that_does_not_exist_yet_resolves_through_the_link(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside)
    prepared = dispatch.prepare(tool_call("WriteFile", path="out/new/dir/file.txt", content="x"), **IDS)
    assert prepared.facts.resolved_path == str(outside / "new" / "dir" / "file.txt")


def test_delete_judges_a_symlink_itself_not_its_target(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (outside / "target.txt").write_text("keep me")
    (workspace / "link.txt").symlink_to(outside / "target.txt")
    prepared = dispatch.prepare(tool_call("DeleteFile", path="link.txt"), **IDS)
    assert prepared.facts.resolved_path == str(workspace / "link.txt")
    assert prepared.call.arguments["path"] == str(workspace / "link.txt")


def test_a_home_relative_path_is_expanded(
    dispatch: ToolDispatch, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = (tmp_path / "home").resolve()
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    prepared = dispatch.prepare(tool_call("ReadFile", path="~/notes.md"), **IDS)
    assert prepared.facts.resolved_path == str(home / "notes.md")


@pytest.mark.parametrize(
    ("tool", "field", "path"),
    [
        ("ReadFile", "path", "~root/.ssh/id_rsa"),
        ("WriteFile", "path", "~other/notes.md"),
        ("DeleteFile", "path", "~nobody"),
        ("RunCommand", "cwd", "~root"),
    ],
)
def test_a_path_naming_another_accounts_home_is_refused_not_taken_as_relative(
    dispatch: ToolDispatch, workspace: Path, tool: str, field: str, path: str
) -> None:
    # Today "~root/x" would be a folder named "~root" inside the project; the model means root's home.
    (workspace / "~root").mkdir()
    arguments = {field: path, "content": "x"} if tool == "WriteFile" else {field: path}
    if tool == "RunCommand":
        arguments["command"] = "ls"
    prepared = dispatch.prepare(tool_call(tool, **arguments), **IDS)
    assert failed_with(prepared.failure, ErrorCode.INVALID_REQUEST)
    assert prepared.failure is not None
    assert prepared.failure.error is not None
    message = prepared.failure.error.message
    assert message.startswith(f"arguments.{field} ")
    assert "another account's home folder" in message
    assert "'./" in message  # how to name a project file that really starts with "~"


def test_a_project_file_starting_with_a_tilde_is_reached_through_dot_slash(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    prepared = dispatch.prepare(tool_call("ReadFile", path="./~backup.txt"), **IDS)
    assert prepared.failure is None
    assert prepared.facts.resolved_path == str(workspace / "~backup.txt")


def test_a_relative_path_without_a_workspace_root_is_an_invalid_request(router: LocalToolRouter) -> None:
    dispatch = ToolDispatch(router, workspace_roots=[], uploader=None)
    prepared = dispatch.prepare(tool_call("ReadFile", path="notes.txt"), **IDS)
    assert failed_with(prepared.failure, ErrorCode.INVALID_REQUEST)
    assert prepared.capability is Capability.FILE_READ
    # An absolute path still works in a general (folder-less) session.
    absolute = dispatch.prepare(tool_call("ReadFile", path="/etc/../etc/hostname"), **IDS)
    assert absolute.failure is None
    assert absolute.facts.resolved_path == os.path.realpath("/etc/hostname")


@pytest.mark.parametrize(
    "path",
    [
        42,
        ["a", "b"],
        {"path": "x"},
        None,
        True,
        "",
        "   ",
        "a\x00b",
        "/tmp/\x00/etc/passwd",
        "x" * 10_240,
        "/" + "a/" * 5_000,
        "\ud800lone",
        "/" + "n" * 300 + "/file",
    ],
    ids=lambda p: repr(p)[:30],
)
def test_an_unusable_path_fails_before_the_policy_without_crashing(dispatch: ToolDispatch, path: Any) -> None:
    prepared = dispatch.prepare(tool_call("ReadFile", path=path), **IDS)
    if prepared.failure is None:
        # A long component is the tool's to refuse (the OS limit); prepare must simply not crash.
        assert prepared.facts.resolved_path is not None
        return
    assert failed_with(prepared.failure, ErrorCode.INVALID_REQUEST)
    assert prepared.failure.error is not None
    assert prepared.failure.error.message.startswith("arguments.path ")
    assert len(prepared.failure.error.message) < 400


def test_a_missing_path_argument_fails_naming_it(dispatch: ToolDispatch) -> None:
    prepared = dispatch.prepare(tool_call("WriteFile", content="x"), **IDS)
    assert failed_with(prepared.failure, ErrorCode.INVALID_REQUEST)
    assert prepared.failure is not None
    assert prepared.failure.error is not None
    assert prepared.failure.error.message == "arguments.path is required"


def test_a_command_gets_its_cwd_resolved_and_defaulted(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "elsewhere").symlink_to(outside)
    default = dispatch.prepare(tool_call("RunCommand", command="  pytest -q  "), **IDS)
    assert default.call.arguments["cwd"] == str(workspace)
    assert default.target == "pytest -q"
    assert default.facts.resolved_path is None
    relative = dispatch.prepare(tool_call("RunCommand", command="ls", cwd="sub"), **IDS)
    assert relative.call.arguments["cwd"] == str(workspace / "sub")
    linked = dispatch.prepare(tool_call("RunCommand", command="ls", cwd="elsewhere"), **IDS)
    assert linked.call.arguments["cwd"] == str(outside)
    bad = dispatch.prepare(tool_call("RunCommand", command="ls", cwd=7), **IDS)
    assert failed_with(bad.failure, ErrorCode.INVALID_REQUEST)


@pytest.mark.parametrize("command", [None, 5, "", "   ", ["ls"]])
def test_a_bad_command_is_left_for_the_policy_and_the_tool(dispatch: ToolDispatch, command: Any) -> None:
    prepared = dispatch.prepare(tool_call("RunCommand", command=command), **IDS)
    assert prepared.failure is None
    assert prepared.target is None


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Example.COM./path?q=1", "example.com"),
        ("http://bücher.example/", "xn--bcher-kva.example"),
        ("https://[::1]:8443/", "::1"),
        ("ftp://example.com/", None),
        ("https://user:pw@example.com/", None),
        (12, None),
        (None, None),
    ],
)
def test_a_requests_target_is_the_urls_normalised_host(
    dispatch: ToolDispatch, url: Any, host: str | None
) -> None:
    prepared = dispatch.prepare(tool_call("HttpRequest", url=url), **IDS)
    assert prepared.failure is None
    assert prepared.target == host
    assert prepared.call.arguments["url"] == url


def test_dot_dot_into_another_project_folder_of_the_session_is_accepted(
    router: LocalToolRouter, workspace: Path, outside: Path
) -> None:
    dispatch = ToolDispatch(router, workspace_roots=[str(workspace), str(outside)], uploader=None)
    prepared = dispatch.prepare(tool_call("ReadFile", path="../outside/shared.txt"), **IDS)
    assert prepared.failure is None
    assert prepared.facts.resolved_path == str(outside / "shared.txt")


def test_a_workspace_root_given_through_a_symlink_is_compared_by_its_real_path(
    router: LocalToolRouter, workspace: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    dispatch = ToolDispatch(router, workspace_roots=[str(alias)], uploader=None)
    assert dispatch.workspace_roots == (str(workspace),)
    prepared = dispatch.prepare(tool_call("ReadFile", path=f"{alias}/src/../a.txt"), **IDS)
    assert prepared.facts.resolved_path == str(workspace / "a.txt")


def test_a_relative_workspace_root_is_a_programming_error(router: LocalToolRouter) -> None:
    with pytest.raises(ValueError, match="absolute"):
        ToolDispatch(router, workspace_roots=["relative/dir"], uploader=None)
