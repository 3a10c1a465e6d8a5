"""EditFile, ListDirectory, Glob and Grep through the host's routing: paths resolved before the policy,
the policy's File.Read paths applied to every file a search touches (the real enforcer), EditFile's
diff in the approval request and in the patch preview. The real tool runtime on real files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.policy import Allowed, ApprovalRequired, Denied, PolicyEnforcer
from agent_runtime.agent_host.routing import PolicyReadScope, ToolDispatch
from contracts.enums import ApprovalMode, Capability, OsFamily, PatchFileStatus, ToolStatus
from contracts.tools import ToolResult
from tests.agent_runtime.agent_host.policy.bundles import NOW, bundle_json
from tests.agent_runtime.agent_host.routing.support import IDS, tool_call


def enforcer(**read_grant: Any) -> PolicyEnforcer:
    grants = [
        {"name": "File.Read", **read_grant},
        {"name": "File.Write"},
    ]
    return PolicyEnforcer.load(bundle_json(*grants), session_id="sess_1", now=NOW, os_family=_os_family())


def _os_family() -> OsFamily:
    return {"win32": OsFamily.WINDOWS, "darwin": OsFamily.MACOS}.get(sys.platform, OsFamily.LINUX)


async def run(
    dispatch: ToolDispatch,
    policy: PolicyEnforcer,
    name: str,
    mode: ApprovalMode = ApprovalMode.ON_RISKY_ACTIONS,
    **arguments: Any,
) -> ToolResult:
    """The loop's moves for one call: prepare, the policy check, execute with the read scope."""
    prepared = dispatch.prepare(tool_call(name, **arguments), **IDS)
    assert prepared.failure is None, prepared.failure
    assert prepared.capability is not None
    outcome = policy.check(prepared.facts, prepared.capability, now=NOW, approval_mode=mode)
    if isinstance(outcome, Denied):
        raise AssertionError(outcome.reason)
    scope = None
    if prepared.capability is Capability.FILE_READ and prepared.facts.resolved_path is not None:
        scope = PolicyReadScope(
            policy,
            approval_mode=mode,
            now=NOW,
            workspace_roots=dispatch.workspace_roots,
            searched=prepared.facts.resolved_path,
        )
    return await dispatch.execute(prepared, workspace_id="ws-1", scope=None, read_scope=scope, **IDS)


def text(result: ToolResult) -> str:
    assert result.status is ToolStatus.SUCCEEDED, result.error
    assert result.output_text is not None
    return result.output_text


def test_search_tools_default_to_the_project_folder_and_resolve_relative_paths(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    for name in ("ListDirectory", "Glob", "Grep"):
        arguments = {"pattern": "x"} if name != "ListDirectory" else {}
        prepared = dispatch.prepare(tool_call(name, **arguments), **IDS)
        assert prepared.capability is Capability.FILE_READ
        assert prepared.facts.resolved_path == str(workspace)
        assert prepared.call.arguments["path"] == str(workspace)
        assert prepared.target == str(workspace)
        relative = dispatch.prepare(tool_call(name, path="src", **arguments), **IDS)
        assert relative.facts.resolved_path == str(workspace / "src")
    edit = dispatch.prepare(tool_call("EditFile", path="src/a.py", oldString="a", newString="b"), **IDS)
    assert edit.capability is Capability.FILE_WRITE
    assert edit.facts.resolved_path == str(workspace / "src" / "a.py")
    missing = dispatch.prepare(tool_call("EditFile", oldString="a", newString="b"), **IDS)
    assert missing.failure is not None


async def test_a_blocked_folder_inside_the_project_is_kept_out_of_every_search(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    (workspace / "app.py").write_text("API_KEY = load()\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "prod.env").write_text("API_KEY = sk-live-123\n")
    (workspace / ".env").write_text("API_KEY = sk-test-456\n")
    policy = enforcer(blockedPaths=[str(workspace / "secrets"), str(workspace / ".env")])
    grepped = text(await run(dispatch, policy, "Grep", pattern="API_KEY"))
    assert "app.py:1:API_KEY = load()" in grepped
    assert "sk-live" not in grepped
    assert "sk-test" not in grepped
    listed = text(await run(dispatch, policy, "ListDirectory", depth=3))
    assert "secrets" not in listed
    assert ".env" not in listed
    assert "prod.env" not in listed
    found = text(await run(dispatch, policy, "Glob", pattern="**/*"))
    assert "prod.env" not in found
    assert ".env" not in found
    assert "app.py" in found


async def test_blocked_entries_match_whole_components_and_ignore_case(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    (workspace / "Secrets").mkdir()
    (workspace / "Secrets" / "a.txt").write_text("needle hidden\n")
    (workspace / "secrets-public").mkdir()
    (workspace / "secrets-public" / "b.txt").write_text("needle shown\n")
    policy = enforcer(blockedPaths=[str(workspace / "secrets")])
    grepped = text(await run(dispatch, policy, "Grep", pattern="needle"))
    assert "needle shown" in grepped
    assert "needle hidden" not in grepped


@pytest.mark.skipif(sys.platform == "win32", reason="creating symlinks needs privileges on Windows")
async def test_a_symlink_to_a_blocked_file_or_out_of_the_allowed_paths_is_not_read(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (outside / "private.txt").write_text("needle private\n")
    (workspace / "link.txt").symlink_to(outside / "private.txt")
    (workspace / "own.txt").write_text("needle own\n")
    policy = enforcer(allowedPaths=[str(workspace)])
    grepped = text(await run(dispatch, policy, "Grep", pattern="needle"))
    assert "needle own" in grepped
    assert "needle private" not in grepped
    assert "link.txt" not in text(await run(dispatch, policy, "ListDirectory"))
    # Allowed by the policy, the link is followed as ReadFile would follow it.
    open_policy = enforcer()
    assert "needle private" in text(await run(dispatch, open_policy, "Grep", pattern="needle"))


async def test_a_search_approved_outside_the_project_reads_only_that_folder(
    dispatch: ToolDispatch, outside: Path
) -> None:
    (outside / "notes.txt").write_text("needle\n")
    policy = enforcer()
    prepared = dispatch.prepare(tool_call("Grep", pattern="needle", path=str(outside)), **IDS)
    assert isinstance(
        policy.check(prepared.facts, Capability.FILE_READ, now=NOW, approval_mode=ApprovalMode.ALWAYS),
        ApprovalRequired,
    )
    grepped = text(
        await run(dispatch, policy, "Grep", ApprovalMode.ALWAYS, pattern="needle", path=str(outside))
    )
    assert "notes.txt:1:needle" in grepped
    scope = PolicyReadScope(
        policy,
        approval_mode=ApprovalMode.ALWAYS,
        now=NOW,
        workspace_roots=dispatch.workspace_roots,
        searched=str(outside),
    )
    assert scope.allows(str(outside / "notes.txt"))
    assert not scope.allows(str(outside.parent / "elsewhere.txt"))  # would need its own approval
    assert isinstance(
        policy.check(prepared.facts, Capability.FILE_READ, now=NOW, approval_mode=ApprovalMode.NEVER), Allowed
    )


# ---------------------------------------------------------------- EditFile's diffs


def test_an_edit_file_approval_shows_the_diff_of_the_edit(dispatch: ToolDispatch, workspace: Path) -> None:
    (workspace / "f.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    edit = dispatch.prepare(tool_call("EditFile", path="f.txt", oldString="two\n", newString="2\n"), **IDS)
    diff = dispatch.proposed_diff(edit)
    assert diff is not None
    assert diff.split("\n")[:-1] == [
        "--- a/f.txt",
        "+++ b/f.txt",
        "@@ -1,3 +1,3 @@",
        " one\r",
        "-two\r",
        "+2\r",
        " three\r",
    ]
    assert (workspace / "f.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\n"
    several = dispatch.prepare(tool_call("EditFile", path="f.txt", oldString="o", newString="0"), **IDS)
    assert dispatch.proposed_diff(several) is None  # the tool will refuse it: nothing to approve


async def test_edit_file_changes_appear_in_the_patch_preview(dispatch: ToolDispatch, workspace: Path) -> None:
    (workspace / "app.py").write_text("a = 1\nb = 2\n")
    policy = enforcer()
    text(await run(dispatch, policy, "ReadFile", path="app.py"))
    text(await run(dispatch, policy, "EditFile", path="app.py", oldString="b = 2", newString="b = 3"))
    text(await run(dispatch, policy, "EditFile", path="app.py", oldString="a = 1", newString="a = 0"))
    (patch,) = dispatch.patch_preview().files
    assert patch.status is PatchFileStatus.MODIFIED
    assert patch.path == str(workspace / "app.py")
    assert "-a = 1\n-b = 2\n+a = 0\n+b = 3\n" in patch.diff
