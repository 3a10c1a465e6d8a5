"""The enforcer (seed 000 §8) at the edges its other tests leave open: long path lists, file calls with
no project folder, folding of blocked command names on macOS and Linux, ``LLM.Call`` through the
general check, approval rules' risk levels against lower- and higher-risk calls, and each denial's
exact reason and code."""

from __future__ import annotations

from typing import Any

import pytest

from agent_runtime.agent_host.policy import (
    Allowed,
    ApprovalReason,
    ApprovalRequired,
    Denied,
    PolicyBundleInvalid,
    PolicyEnforcer,
    ToolCallFacts,
)
from agent_runtime.agent_host.policy.paths import PathError, PathRules, path_key
from contracts.enums import ApprovalMode, Capability, OsFamily, RiskLevel
from contracts.errors import ErrorCode
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer

ROOT = "/home/u/proj"


def check(policy: PolicyEnforcer, facts: ToolCallFacts, capability: Capability, **kwargs: Any) -> object:
    kwargs.setdefault("approval_mode", ApprovalMode.NEVER)
    return policy.check(facts, capability, now=NOW, **kwargs)


def read(path: str, roots: tuple[str, ...] = (ROOT,), size: int | None = None) -> ToolCallFacts:
    return ToolCallFacts(
        "ReadFile", {"path": path}, resolved_path=path, file_size=size, workspace_roots=roots
    )


def write(path: str, content: object = "x", roots: tuple[str, ...] = (ROOT,)) -> ToolCallFacts:
    return ToolCallFacts(
        "WriteFile", {"path": path, "content": content}, resolved_path=path, workspace_roots=roots
    )


def run(command: object) -> ToolCallFacts:
    return ToolCallFacts("RunCommand", {"command": command, "cwd": ROOT})


# ------------------------------------------------------------------ path lists of any length


LONG = [f"/srv/blocked{i}" for i in range(40)]


@pytest.mark.parametrize("count", [1, 16, 17, 40])
def test_a_blocked_list_blocks_every_entry_and_nothing_beside_them_whatever_its_length(count: int) -> None:
    entries = LONG[:count]
    rules = PathRules(entries, OsFamily.LINUX, blocked=True)
    for entry in entries:
        assert rules.match(rules.key(entry)) == entry
        assert rules.match(rules.key(entry + "/deep/er/file")) == entry
        assert rules.match(rules.key(entry + "x/file")) is None  # a neighbour, not a child
    assert rules.match(rules.key("/srv")) is None
    assert rules.match(rules.key("/srv/other/blocked0")) is None


def test_a_long_blocked_list_with_the_root_blocks_everything() -> None:
    rules = PathRules([*LONG, "/"], OsFamily.LINUX, blocked=True)
    assert rules.match(rules.key("/anything/at/all")) == "/"
    assert rules.match(rules.key("/")) == "/"


def test_a_long_list_answers_with_the_entry_the_path_lies_under() -> None:
    rules = PathRules([*LONG, "/home/u", "/home/u/proj/secret"], OsFamily.LINUX, blocked=True)
    assert rules.match(rules.key("/home/u/proj/a.py")) == "/home/u"
    assert rules.match(rules.key("/home/u/proj/secret/k")) in {"/home/u", "/home/u/proj/secret"}


def test_a_long_blocked_list_is_case_and_normalisation_insensitive_on_macos() -> None:
    policy = enforcer(
        {"name": "File.Read", "blockedPaths": [*LONG, "/Users/u/Café"]}, os_family=OsFamily.MACOS
    )
    for path in ("/Users/u/Café/a", "/users/U/CAFÉ/a", "/Users/u/Cafe\u0301/a"):
        assert check(policy, read(path), Capability.FILE_READ) == Denied(f"Path is blocked: {path}")
    assert check(policy, read("/Users/u/Cafe/a"), Capability.FILE_READ) == Allowed(RiskLevel.LOW)


def test_a_long_allowed_list_admits_only_exact_case_on_linux() -> None:
    policy = enforcer({"name": "File.Read", "allowedPaths": [*LONG, ROOT]})
    assert check(policy, read(f"{ROOT}/a"), Capability.FILE_READ) == Allowed(RiskLevel.LOW)
    assert check(policy, read("/home/u/Proj/a"), Capability.FILE_READ) == Denied(
        "Path not in allowed paths: /home/u/Proj/a"
    )


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("relative/a", "the path is not absolute: relative/a"),
        ("/home/u/./a", "the path is not resolved (it has . or .. components): /home/u/./a"),
        ("/home/u/../a", "the path is not resolved (it has . or .. components): /home/u/../a"),
        ("/home/Ü/../a", "the path is not resolved (it has . or .. components): /home/Ü/../a"),
        ("/a\x00b", "the path contains a NUL character"),
    ],
)
def test_a_posix_path_that_cannot_be_checked_is_denied_with_its_reason(path: str, reason: str) -> None:
    policy = enforcer({"name": "File.Read", "blockedPaths": ["/etc"]})
    assert check(policy, read(path), Capability.FILE_READ) == Denied(f"The path cannot be checked: {reason}.")


def test_posix_keys_collapse_repeated_separators_and_fold_only_blocked_entries() -> None:
    assert path_key("//home///u/", OsFamily.LINUX, fold=False) == "/home/u/"
    assert path_key("/Home/Ü", OsFamily.LINUX, fold=False) == "/Home/Ü/"
    assert path_key("/Home/Ü", OsFamily.LINUX, fold=True) == "/home/ü/"
    assert path_key("/Home/U\u0308", OsFamily.LINUX, fold=True) == "/home/ü/"
    assert path_key("/", OsFamily.LINUX, fold=True) == "/"
    with pytest.raises(PathError, match=r"^the path is empty$"):
        path_key("", OsFamily.LINUX, fold=False)


# ------------------------------------------------------------------ a file call with no project folder


def test_writing_with_no_project_folder_is_high_risk_and_says_why() -> None:
    policy = enforcer({"name": "File.Write"})
    facts = write("/home/u/a.txt", roots=())
    assert check(policy, facts, Capability.FILE_WRITE) == Allowed(RiskLevel.HIGH)
    asked = check(policy, facts, Capability.FILE_WRITE, approval_mode=ApprovalMode.ON_RISKY_ACTIONS)
    assert isinstance(asked, ApprovalRequired)
    assert asked.reasons == (ApprovalReason.RISKY_ACTION,)
    assert asked.notes == ("The file is outside the project folders.",)
    assert asked.action_summary == "Write: /home/u/a.txt"
    assert asked.title == "Write a file"


def test_reading_with_no_project_folder_asks_in_always_mode() -> None:
    policy = enforcer({"name": "File.Read"})
    asked = check(
        policy, read("/home/u/a.txt", roots=()), Capability.FILE_READ, approval_mode=ApprovalMode.ALWAYS
    )
    assert isinstance(asked, ApprovalRequired)
    assert asked.reasons == (ApprovalReason.ALWAYS_MODE,)
    assert asked.risk_level is RiskLevel.LOW
    assert asked.action_summary == "Read: /home/u/a.txt"


def test_a_file_call_without_a_resolved_path_is_denied_with_the_reason() -> None:
    policy = enforcer({"name": "File.Delete"})
    facts = ToolCallFacts("DeleteFile", {"path": "a"}, resolved_path="")
    assert check(policy, facts, Capability.FILE_DELETE) == Denied(
        "The file path was not resolved before the policy check."
    )


def test_deleting_is_high_risk_and_summarised_as_a_deletion() -> None:
    policy = enforcer({"name": "File.Delete"})
    asked = check(
        policy, read(f"{ROOT}/a"), Capability.FILE_DELETE, approval_mode=ApprovalMode.ON_RISKY_ACTIONS
    )
    assert isinstance(asked, ApprovalRequired)
    assert (asked.risk_level, asked.title, asked.action_summary) == (
        RiskLevel.HIGH,
        "Delete a file",
        f"Delete: {ROOT}/a",
    )
    assert asked.notes == ()


def test_many_different_project_folder_sets_in_one_session_are_each_checked_right() -> None:
    policy = enforcer({"name": "File.Write"})
    for i in range(20):
        root = f"/home/u/p{i}"
        assert check(policy, write(f"{root}/a", roots=(root,)), Capability.FILE_WRITE) == Allowed(
            RiskLevel.MEDIUM
        )
        assert check(policy, write(f"/home/u/p{i + 1}/a", roots=(root,)), Capability.FILE_WRITE) == Allowed(
            RiskLevel.HIGH
        )


# ------------------------------------------------------------------ size limits


def test_a_file_exactly_at_the_size_limit_is_allowed_and_one_byte_more_is_not() -> None:
    policy = enforcer(
        {"name": "File.Read", "maxFileSizeBytes": 1000}, {"name": "File.Write", "maxFileSizeBytes": 4}
    )
    assert check(policy, read(f"{ROOT}/a", size=1000), Capability.FILE_READ) == Allowed(RiskLevel.LOW)
    assert check(policy, read(f"{ROOT}/a", size=1001), Capability.FILE_READ) == Denied(
        f"File exceeds the size limit of 1,000 bytes: {ROOT}/a", ErrorCode.FILE_TOO_LARGE
    )
    assert check(policy, read(f"{ROOT}/new"), Capability.FILE_READ) == Allowed(RiskLevel.LOW)
    # Writing counts the content's UTF-8 bytes, not the size of the file it replaces.
    assert check(policy, write(f"{ROOT}/a", "éé"), Capability.FILE_WRITE) == Allowed(RiskLevel.MEDIUM)
    assert check(policy, write(f"{ROOT}/a", "ééx"), Capability.FILE_WRITE) == Denied(
        f"File exceeds the size limit of 4 bytes: {ROOT}/a", ErrorCode.FILE_TOO_LARGE
    )
    assert check(policy, write(f"{ROOT}/a", b"bytes"), Capability.FILE_WRITE) == Allowed(RiskLevel.MEDIUM)


# ------------------------------------------------------------------ commands


@pytest.mark.parametrize("os_family", [OsFamily.LINUX, OsFamily.MACOS])
@pytest.mark.parametrize("command", ["RM -rf /", "Rm x", "/usr/bin/RM x", "CAFE\u0301 x", "ﬀmpeg -i a"])
def test_blocked_command_names_match_regardless_of_case_and_unicode_form_on_posix(
    os_family: OsFamily, command: str
) -> None:
    # A case-insensitive volume (macOS by default) runs /usr/bin/RM as rm: err towards refusal.
    policy = enforcer(
        {"name": "Shell.Exec", "blockedCommands": ["rm", "FFmpeg", "Café"]}, os_family=os_family
    )
    outcome = check(policy, run(command), Capability.SHELL_EXEC)
    assert isinstance(outcome, Denied)
    assert outcome.reason.startswith("Command is blocked: ")


def test_an_allowed_command_name_matches_only_exactly_on_posix() -> None:
    policy = enforcer({"name": "Shell.Exec", "allowedCommands": ["pytest"]})
    assert check(policy, run("pytest -q"), Capability.SHELL_EXEC) == Allowed(RiskLevel.MEDIUM)
    assert check(policy, run("PYTEST -q"), Capability.SHELL_EXEC) == Denied(
        "Command not in allowed commands: PYTEST"
    )


def test_a_blocked_builtin_is_blocked_though_builtins_need_no_allow_entry() -> None:
    policy = enforcer({"name": "Shell.Exec", "allowedCommands": ["ls"], "blockedCommands": ["echo"]})
    assert check(policy, run("cd /tmp && ls"), Capability.SHELL_EXEC) == Allowed(RiskLevel.MEDIUM)
    assert check(policy, run("ls; echo hi"), Capability.SHELL_EXEC) == Denied("Command is blocked: echo")


def test_windows_builtins_are_implicit_only_on_windows() -> None:
    windows = enforcer({"name": "Shell.Exec", "allowedCommands": ["dir"]}, os_family=OsFamily.WINDOWS)
    assert check(windows, run("cd C:\\x && dir"), Capability.SHELL_EXEC) == Allowed(RiskLevel.MEDIUM)
    posix = enforcer({"name": "Shell.Exec", "allowedCommands": ["ls"]})
    assert check(posix, run("call ls"), Capability.SHELL_EXEC) == Denied(
        "Command not in allowed commands: call"
    )


@pytest.mark.parametrize("command", [None, "", "   ", 42])
def test_a_missing_command_is_an_invalid_request(command: object) -> None:
    policy = enforcer({"name": "Shell.Exec", "allowedCommands": ["ls"]})
    assert check(policy, run(command), Capability.SHELL_EXEC) == Denied(
        "The command is missing or empty.", ErrorCode.INVALID_REQUEST
    )


def test_only_a_blocked_list_leaves_unlisted_commands_high_risk() -> None:
    policy = enforcer({"name": "Shell.Exec", "blockedCommands": ["rm"]})
    assert check(policy, run("ls"), Capability.SHELL_EXEC) == Allowed(RiskLevel.HIGH)


def test_an_unverifiable_command_with_a_rule_lists_every_problem_as_a_note() -> None:
    policy = enforcer(
        {"name": "Shell.Exec", "blockedCommands": ["rm"], "approvalRuleId": "sh"},
        rules=[{"approvalRuleId": "sh", "title": "Run a command", "riskLevel": "low"}],
    )
    asked = check(policy, run("ls && $TOOL x && eval y"), Capability.SHELL_EXEC)
    assert isinstance(asked, ApprovalRequired)
    assert asked.reasons == (ApprovalReason.UNVERIFIABLE_COMMAND,)
    assert asked.risk_level is RiskLevel.HIGH  # the rule's low risk never lowers the call's
    assert len(asked.notes) == 2
    assert all(note.startswith("The command ") and note.endswith(".") for note in asked.notes)
    assert asked.title == "Run a command"
    assert asked.description == "The agent wants to run a command on this computer."
    assert asked.details.cwd == ROOT


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("git push", "is not a program name (one name per entry, no arguments)"),
        ("  ", "is not a program name (one name per entry, no arguments)"),
        ("rm\tx", "is not a program name (one name per entry, no arguments)"),
    ],
)
def test_a_command_entry_with_arguments_is_refused_naming_it(entry: str, problem: str) -> None:
    with pytest.raises(PolicyBundleInvalid) as caught:
        enforcer({"name": "Shell.Exec", "blockedCommands": ["ls", entry]})
    assert caught.value.shape.message == f"capabilities[Shell.Exec].blockedCommands: {entry!r} {problem}"
    assert caught.value.shape.details["entry"] == entry


# ------------------------------------------------------------------ LLM.Call through the general check


def test_llm_call_is_not_a_tool_capability_even_when_granted() -> None:
    policy = enforcer({"name": "LLM.Call"})
    facts = ToolCallFacts("ReadFile", {"path": "/a"}, resolved_path="/a")
    assert check(policy, facts, Capability.LLM_CALL) == Denied("LLM.Call is not a tool capability")
    assert check(policy, facts, Capability.FILE_READ) == Denied("Capability not granted: File.Read")


# ------------------------------------------------------------------ approval rules and risk levels


@pytest.mark.parametrize(
    ("rule_risk", "call_risk", "expected"),
    [
        ("high", "low", RiskLevel.HIGH),  # a rule raises a lower-risk call's level...
        ("medium", "low", RiskLevel.MEDIUM),
        ("low", "low", RiskLevel.LOW),
        ("low", "medium", RiskLevel.MEDIUM),  # ...and never lowers it
        ("medium", "medium", RiskLevel.MEDIUM),
        ("medium", "high", RiskLevel.HIGH),
        (None, "medium", RiskLevel.MEDIUM),
    ],
)
def test_an_approval_rules_risk_level_raises_a_call_but_never_lowers_it(
    rule_risk: str | None, call_risk: str, expected: RiskLevel
) -> None:
    capability = {"low": "File.Read", "medium": "File.Write", "high": "File.Delete"}[call_risk]
    rule: dict[str, Any] = {"approvalRuleId": "r", "title": "Check with you", "description": "Because."}
    if rule_risk is not None:
        rule["riskLevel"] = rule_risk
    policy = enforcer({"name": capability, "requiresApproval": True, "approvalRuleId": "r"}, rules=[rule])
    asked = check(policy, write(f"{ROOT}/a"), Capability(capability))
    assert isinstance(asked, ApprovalRequired)
    assert asked.risk_level is expected
    assert (asked.rule_id, asked.title, asked.description) == ("r", "Check with you", "Because.")


def test_a_rule_without_a_description_keeps_the_built_in_one() -> None:
    policy = enforcer(
        {"name": "BackendTool.Invoke", "requiresApproval": True, "approvalRuleId": "r"},
        rules=[{"approvalRuleId": "r", "title": "Remote tool"}],
    )
    asked = check(policy, ToolCallFacts("search_docs", {}), Capability.BACKEND_TOOL_INVOKE)
    assert isinstance(asked, ApprovalRequired)
    assert (asked.title, asked.description) == (
        "Remote tool",
        "The agent wants to call a tool run by the backend.",
    )
    assert asked.action_summary == "Use remote tool: search_docs"
    assert asked.risk_level is RiskLevel.MEDIUM


def test_an_upload_asks_with_its_tool_name_when_the_bundle_requires_approval() -> None:
    policy = enforcer({"name": "Workspace.Upload", "requiresApproval": True})
    asked = check(policy, ToolCallFacts("UploadArtifact", {}), Capability.WORKSPACE_UPLOAD)
    assert isinstance(asked, ApprovalRequired)
    assert (asked.title, asked.action_summary, asked.risk_level) == (
        "Upload an artifact",
        "UploadArtifact",
        RiskLevel.LOW,
    )


def test_reasons_are_listed_once_each_with_the_bundles_first() -> None:
    policy = enforcer({"name": "File.Delete", "requiresApproval": True})
    asked = check(policy, read(f"{ROOT}/a"), Capability.FILE_DELETE, approval_mode=ApprovalMode.ALWAYS)
    assert isinstance(asked, ApprovalRequired)
    assert asked.reasons == (ApprovalReason.BUNDLE_REQUIRES, ApprovalReason.ALWAYS_MODE)
    risky = check(
        policy, read(f"{ROOT}/a"), Capability.FILE_DELETE, approval_mode=ApprovalMode.ON_RISKY_ACTIONS
    )
    assert isinstance(risky, ApprovalRequired)
    assert risky.reasons == (ApprovalReason.BUNDLE_REQUIRES, ApprovalReason.RISKY_ACTION)


def test_a_request_is_summarised_by_method_and_url_and_defaults_to_get() -> None:
    policy = enforcer({"name": "Network.Http", "requiresApproval": True})
    asked = check(
        policy, ToolCallFacts("HttpRequest", {"url": "https://example.com/"}), Capability.NETWORK_HTTP
    )
    assert isinstance(asked, ApprovalRequired)
    assert asked.action_summary == "GET https://example.com/"
    assert (asked.details.method, asked.risk_level) == ("GET", RiskLevel.HIGH)
    assert check(policy, ToolCallFacts("HttpRequest", {"url": ""}), Capability.NETWORK_HTTP) == Denied(
        "The URL is missing.", ErrorCode.INVALID_REQUEST
    )
    assert check(
        policy,
        ToolCallFacts("HttpRequest", {"url": "https://example.com/"}),
        Capability.NETWORK_HTTP,
        allow_network=False,
    ) == Denied("Network access is turned off for this task.")


def test_a_remote_tool_off_the_list_is_denied_by_name() -> None:
    policy = enforcer({"name": "BackendTool.Invoke", "allowedToolNames": ["search_docs"]})
    assert check(policy, ToolCallFacts("search_docs", {}), Capability.BACKEND_TOOL_INVOKE) == Allowed(
        RiskLevel.MEDIUM
    )
    assert check(policy, ToolCallFacts("drop_db", {}), Capability.BACKEND_TOOL_INVOKE) == Denied(
        "Remote tool not allowed: drop_db"
    )


# ------------------------------------------------------------------ builtins and the approval texts

POSIX_BUILTINS = ["cd", "pushd", "popd", "dirs", "pwd", "true", "false", ":", "echo", "printf", "test", "["]
POSIX_BUILTINS += ["exit", "return", "shift", "wait", "export", "unset", "read"]
WINDOWS_BUILTINS = ["cd", "chdir", "echo", "pushd", "popd", "call"]


@pytest.mark.parametrize("builtin", POSIX_BUILTINS)
def test_a_harmless_posix_builtin_needs_no_allow_entry_but_obeys_the_block_list(builtin: str) -> None:
    allowed = enforcer({"name": "Shell.Exec", "allowedCommands": ["make"]})
    assert check(allowed, run(f"{builtin} x && make"), Capability.SHELL_EXEC) == Allowed(RiskLevel.MEDIUM)
    blocked = enforcer({"name": "Shell.Exec", "allowedCommands": ["make"], "blockedCommands": [builtin]})
    assert check(blocked, run(f"{builtin} x && make"), Capability.SHELL_EXEC) == Denied(
        f"Command is blocked: {builtin}"
    )


@pytest.mark.parametrize(
    "modifier", ["command", "builtin", "exec", "nohup", "time", "noglob", "nocorrect", "-"]
)
def test_a_modifier_needs_no_allow_entry_and_the_command_after_it_is_checked(modifier: str) -> None:
    policy = enforcer({"name": "Shell.Exec", "allowedCommands": ["make"]})
    assert check(policy, run(f"{modifier} make"), Capability.SHELL_EXEC) == Allowed(RiskLevel.MEDIUM)
    assert check(policy, run(f"{modifier} rm x"), Capability.SHELL_EXEC) == Denied(
        "Command not in allowed commands: rm"
    )


@pytest.mark.parametrize("builtin", WINDOWS_BUILTINS)
def test_a_harmless_cmd_builtin_needs_no_allow_entry_on_windows(builtin: str) -> None:
    policy = enforcer({"name": "Shell.Exec", "allowedCommands": ["make"]}, os_family=OsFamily.WINDOWS)
    assert check(policy, run(f"{builtin} make && make"), Capability.SHELL_EXEC) == Allowed(RiskLevel.MEDIUM)


@pytest.mark.parametrize("program", ["dirs", "printf", "read", "true"])
def test_posix_only_builtins_are_programs_on_windows(program: str) -> None:
    policy = enforcer({"name": "Shell.Exec", "allowedCommands": ["make"]}, os_family=OsFamily.WINDOWS)
    assert check(policy, run(f"{program} && make"), Capability.SHELL_EXEC) == Denied(
        f"Command not in allowed commands: {program}"
    )


@pytest.mark.parametrize(
    ("grant", "capability", "facts", "title", "description"),
    [
        (
            "File.Read",
            Capability.FILE_READ,
            read("/etc/a"),
            "Read a file",
            "The agent wants to read a file on this computer.",
        ),
        (
            "File.Write",
            Capability.FILE_WRITE,
            write("/etc/a"),
            "Write a file",
            "The agent wants to create or change a file on this computer.",
        ),
        (
            "File.Delete",
            Capability.FILE_DELETE,
            read("/etc/a"),
            "Delete a file",
            "The agent wants to delete a file on this computer.",
        ),
        (
            "Shell.Exec",
            Capability.SHELL_EXEC,
            run("ls"),
            "Run a local command",
            "The agent wants to run a command on this computer.",
        ),
        (
            "Network.Http",
            Capability.NETWORK_HTTP,
            ToolCallFacts("HttpRequest", {"url": "https://a.example/"}),
            "Make an HTTP request",
            "The agent wants to send a request over the network.",
        ),
        (
            "Workspace.Upload",
            Capability.WORKSPACE_UPLOAD,
            ToolCallFacts("UploadArtifact", {}),
            "Upload an artifact",
            "The agent wants to upload output to the workspace.",
        ),
        (
            "BackendTool.Invoke",
            Capability.BACKEND_TOOL_INVOKE,
            ToolCallFacts("search", {}),
            "Use a remote tool",
            "The agent wants to call a tool run by the backend.",
        ),
    ],
)
def test_each_capability_asks_with_its_own_title_and_description(
    grant: str, capability: Capability, facts: ToolCallFacts, title: str, description: str
) -> None:
    policy = enforcer({"name": grant, "requiresApproval": True})
    asked = check(policy, facts, capability)
    assert isinstance(asked, ApprovalRequired)
    assert (asked.title, asked.description) == (title, description)
    assert asked.rule_id is None
    assert asked.details.tool_name == facts.tool_name


# ------------------------------------------------------------------ loading and the look-ups


def test_a_naive_clock_reading_is_refused_at_load_too() -> None:
    from datetime import datetime

    from tests.agent_runtime.agent_host.policy.bundles import bundle_json

    with pytest.raises(ValueError, match=r"^now must be a timezone-aware datetime$"):
        PolicyEnforcer.load(
            bundle_json(), session_id="sess_1", now=datetime(2026, 2, 21, 15, 0), os_family=OsFamily.LINUX
        )


def test_another_sessions_bundle_names_the_session_field() -> None:
    from tests.agent_runtime.agent_host.policy.bundles import bundle_json

    with pytest.raises(PolicyBundleInvalid) as caught:
        PolicyEnforcer.load(bundle_json(), session_id="sess_2", now=NOW, os_family=OsFamily.LINUX)
    assert caught.value.shape.details == {"field": "policyBundle.sessionId"}
    assert caught.value.shape.message == "The policy bundle is for session sess_1, not sess_2."


@pytest.mark.parametrize(
    ("grant", "field", "entry", "problem"),
    [
        (
            {"name": "File.Read", "allowedPaths": ["/ok", "rel"]},
            "allowedPaths",
            "rel",
            "is not a usable path entry",
        ),
        (
            {"name": "File.Read", "blockedPaths": ["/ok", "/a/../b"]},
            "blockedPaths",
            "/a/../b",
            "is not a usable path entry",
        ),
        (
            {"name": "Shell.Exec", "allowedCommands": ["ls", "a b"]},
            "allowedCommands",
            "a b",
            "is not a program name",
        ),
        (
            {"name": "Shell.Exec", "blockedCommands": ["ls", "bin/"]},
            "blockedCommands",
            "bin/",
            "is not a program name",
        ),
    ],
)
def test_a_bad_entry_is_named_with_its_list(
    grant: dict[str, Any], field: str, entry: str, problem: str
) -> None:
    with pytest.raises(PolicyBundleInvalid) as caught:
        enforcer(grant)
    assert caught.value.shape.details == {"capability": grant["name"], "field": field, "entry": entry}
    assert caught.value.shape.message.startswith(
        f"capabilities[{grant['name']}].{field}: {entry!r} {problem}"
    )


def test_the_look_ups_return_what_the_bundle_holds() -> None:
    rules = [{"approvalRuleId": "r", "title": "T"}]
    policy = enforcer({"name": "File.Read", "approvalRuleId": "r"}, rules=rules, os_family=OsFamily.MACOS)
    assert policy.os_family is OsFamily.MACOS
    assert policy.bundle.session_id == "sess_1"
    assert policy.granted == frozenset({Capability.FILE_READ})
    grant = policy.grant(Capability.FILE_READ)
    assert grant is not None
    assert grant.approval_rule_id == "r"
    assert policy.grant(Capability.FILE_WRITE) is None
    rule = policy.approval_rule("r")
    assert rule is not None
    assert rule.title == "T"
    assert policy.approval_rule("x") is None
    assert policy.redactor.redact("plain text").text == "plain text"


class _RecordingBudget:
    def __init__(self) -> None:
        self.asked: list[int] = []

    @property
    def used(self) -> int:
        return 0

    @property
    def limit(self) -> int:
        return 10

    def allows(self, estimate: int) -> bool:
        self.asked.append(estimate)
        return True


def test_the_llm_precheck_asks_the_budget_for_nothing_more_by_default() -> None:
    budget = _RecordingBudget()
    assert enforcer({"name": "LLM.Call"}).check_llm_call("model-a", now=NOW, budget=budget) == Allowed(
        RiskLevel.LOW
    )
    assert budget.asked == [0]
    assert enforcer({"name": "File.Read"}).check_llm_call("model-a", now=NOW) == Denied(
        "Capability not granted: LLM.Call"
    )


def test_an_allowed_command_name_is_kept_exactly_on_posix_and_a_blocked_one_folded() -> None:
    policy = enforcer({"name": "Shell.Exec", "allowedCommands": ["PyTest"], "blockedCommands": ["Café"]})
    assert check(policy, run("PyTest -q"), Capability.SHELL_EXEC) == Allowed(RiskLevel.MEDIUM)
    only_blocked = enforcer({"name": "Shell.Exec", "blockedCommands": ["Café"]})
    assert check(only_blocked, run("Thé x"), Capability.SHELL_EXEC) == Allowed(RiskLevel.HIGH)
    assert check(only_blocked, run("CAFÉ x"), Capability.SHELL_EXEC) == Denied("Command is blocked: CAFÉ")


def test_an_unverifiable_command_is_denied_naming_its_first_problem() -> None:
    policy = enforcer({"name": "Shell.Exec", "blockedCommands": ["rm"]})
    assert check(policy, run("$TOOL x && eval y"), Capability.SHELL_EXEC) == Denied(
        "The command cannot be checked against the policy's command lists: it computes a command name"
        " when it runs (a variable, substitution, glob or brace)."
    )


def test_the_bundles_reason_comes_before_the_commands_own() -> None:
    policy = enforcer(
        {"name": "Shell.Exec", "blockedCommands": ["rm"], "requiresApproval": True, "approvalRuleId": "r"},
        rules=[{"approvalRuleId": "r", "title": "T"}],
    )
    asked = check(policy, run("eval x"), Capability.SHELL_EXEC)
    assert isinstance(asked, ApprovalRequired)
    assert asked.reasons == (ApprovalReason.BUNDLE_REQUIRES, ApprovalReason.UNVERIFIABLE_COMMAND)


def test_project_folders_match_exactly_on_linux() -> None:
    policy = enforcer({"name": "File.Write"})
    assert check(policy, write("/home/u/Proj/a", roots=("/home/u/proj",)), Capability.FILE_WRITE) == Allowed(
        RiskLevel.HIGH
    )


def test_written_content_is_measured_in_utf8_bytes_even_with_a_lone_surrogate() -> None:
    policy = enforcer({"name": "File.Write", "maxFileSizeBytes": 3})
    assert check(policy, write(f"{ROOT}/a", "\ud800"), Capability.FILE_WRITE) == Allowed(RiskLevel.MEDIUM)
    assert check(policy, write(f"{ROOT}/a", "\ud800x"), Capability.FILE_WRITE) == Denied(
        f"File exceeds the size limit of 3 bytes: {ROOT}/a", ErrorCode.FILE_TOO_LARGE
    )
