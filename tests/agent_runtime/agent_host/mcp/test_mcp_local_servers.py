"""A local MCP server's command line under ``RunCommand``'s command policy (seed 000 §8.4), with the real
enforcer: blocked and unlisted programs are refused, and so is a line the policy would only run with
the user's approval (nobody can be asked when the session starts)."""

from __future__ import annotations

from typing import Any

from agent_runtime.agent_host.mcp.local_servers import command_line, local_command_check
from contracts.enums import OsFamily
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer


def checker(*grants: dict[str, Any], **kwargs: Any) -> Any:
    policy = enforcer(*grants, **kwargs)
    return local_command_check(lambda: policy, now=lambda: NOW, workspace_roots=("/home/u/proj",))


def test_a_command_the_policy_allows_may_start() -> None:
    check = checker({"name": "Shell.Exec", "allowedCommands": ["node", "uvx"]})
    assert check(["uvx", "mcp-server-git", "--repo", "/home/u/proj"], "/home/u/proj") is None


def test_blocked_unlisted_and_ungranted_commands_are_refused_with_the_policys_reason() -> None:
    check = checker({"name": "Shell.Exec", "allowedCommands": ["node"], "blockedCommands": ["sudo"]})
    blocked = check(["sudo", "node", "server.js"], None)
    assert blocked is not None
    assert "Command is blocked: sudo" in blocked
    unlisted = check(["python3", "server.py"], None)
    assert unlisted is not None
    assert "Command not in allowed commands: python3" in unlisted
    nothing = checker({"name": "File.Read"})(["node", "server.js"], None)
    assert nothing is not None
    assert "Capability not granted: Shell.Exec" in nothing


def test_a_command_the_policy_would_only_run_with_approval_is_refused() -> None:
    check = checker(
        {"name": "Shell.Exec", "approvalCommands": ["node"], "approvalRuleId": "shell"},
        rules=[{"approvalRuleId": "shell", "title": "Run a command"}],
    )
    refused = check(["node", "server.js"], None)
    assert refused is not None
    assert "only with the user's approval" in refused


def test_arguments_cannot_smuggle_a_second_command() -> None:
    check = checker({"name": "Shell.Exec", "allowedCommands": ["node"]})
    # Quoted as one word each: the shell would never see the ';'.
    assert check(["node", "server.js; rm -rf ~"], None) is None
    assert command_line(["node", "a b;c"], OsFamily.LINUX) == "node 'a b;c'"
    assert command_line(["node", "a b"], OsFamily.WINDOWS) == 'node "a b"'
