"""Saved permission rules ("Always allow in this project"): which approval prompts they answer.

Written from the issue: rules are exact commands or command prefixes on the *parsed* command (every
program the line would start must match, so ``pytest -q; rm -rf /`` never matches ``pytest *``),
path globs for writes inside the project, domains for HTTP; a rule answers only a prompt raised by the
approval mode — never what the bundle denies, never an approval the bundle itself requires.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_runtime.agent_host.policy import ApprovalRequired, Denied, PolicyEnforcer, ToolCallFacts
from agent_runtime.agent_host.policy.saved_rules import SavedRules
from contracts.enums import ApprovalMode, Capability, OsFamily
from contracts.permissions import PermissionRule, PermissionRuleKind
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer

ROOT = "/home/u/proj"

SHELL = {"name": "Shell.Exec", "blockedCommands": ["sudo"], "approvalRuleId": "shell"}
SHELL_RULES = [{"approvalRuleId": "shell", "title": "Run a command"}]


def command(pattern: str) -> PermissionRule:
    return PermissionRule(kind=PermissionRuleKind.COMMAND, pattern=pattern)


def path(pattern: str) -> PermissionRule:
    return PermissionRule(kind=PermissionRuleKind.PATH, pattern=pattern)


def domain(pattern: str) -> PermissionRule:
    return PermissionRule(kind=PermissionRuleKind.DOMAIN, pattern=pattern)


def saved(*rules: PermissionRule, os_family: OsFamily = OsFamily.LINUX, root: str = ROOT) -> SavedRules:
    return SavedRules(list(rules), os_family=os_family, workspace_roots=[root])


def verdict(
    policy: PolicyEnforcer,
    rules: SavedRules,
    facts: ToolCallFacts,
    capability: Capability,
    mode: ApprovalMode = ApprovalMode.ON_RISKY_ACTIONS,
) -> str:
    """What the user experiences: denied, asked, answered by a rule (its pattern), or allowed."""
    outcome = policy.check(facts, capability, now=NOW, approval_mode=mode)
    if isinstance(outcome, Denied):
        return "denied"
    if isinstance(outcome, ApprovalRequired):
        rule = rules.answering(outcome, capability)
        return f"rule {rule.pattern}" if rule is not None else "asked"
    return "allowed"


def run(line: str) -> ToolCallFacts:
    return ToolCallFacts("RunCommand", {"command": line, "cwd": ROOT})


def write(file: str, root: str = ROOT) -> ToolCallFacts:
    return ToolCallFacts(
        "WriteFile", {"path": file, "content": "x"}, resolved_path=file, workspace_roots=(root,)
    )


def delete(file: str) -> ToolCallFacts:
    return ToolCallFacts("DeleteFile", {"path": file}, resolved_path=file, workspace_roots=(ROOT,))


def fetch(url: str) -> ToolCallFacts:
    return ToolCallFacts("HttpRequest", {"url": url, "method": "GET"})


# ------------------------------------------------------------------ commands, on the parsed line

COMMAND_RULES = saved(command("pytest *"), command("git status"), command("ls *"), command("npm run test"))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("pytest", "rule pytest *"),
        ("pytest -q tests/", "rule pytest *"),
        ("git status", "rule git status"),
        ("git  'status'", "rule git status"),  # the parse, not the text, is compared
        ("cd src && pytest -x", "rule pytest *"),  # cd is a builtin an allowlist need not name either
        ("(pytest -q)", "rule pytest *"),
        ("pytest -q | ls", "rule pytest *"),
        ("npm run test", "rule npm run test"),
        # every program the line would start must match a rule
        ("pytest -q; rm -rf /", "asked"),
        ("pytest -q && rm -rf /", "asked"),
        ("pytest -q || rm -rf /", "asked"),
        ("pytest -q & rm -rf /", "asked"),
        ("pytest -q | sh", "asked"),
        ("pytest $(rm -rf /)", "asked"),
        ("pytest `rm -rf /`", "asked"),
        ('pytest "$(rm -rf /)"', "asked"),
        ("pytest <(rm -rf /)", "asked"),
        ("echo $(rm -rf /)", "asked"),
        ("sh -c 'pytest -q'", "asked"),  # sh itself has no rule
        ("bash -c 'pytest && rm -rf /'", "asked"),
        ("env FOO=1 pytest", "asked"),  # env is a program of its own
        ("FOO=1 pytest", "asked"),  # a changed environment is not what the rule named
        ("PATH=/tmp pytest", "asked"),  # cannot be verified at all
        ("timeout 5 pytest", "asked"),
        ("ls | xargs rm", "asked"),
        ("find . -exec rm {} +", "asked"),
        ("./pytest", "asked"),  # another program of the same name
        ("/tmp/pytest -q", "asked"),
        ("pytest > ~/.bashrc", "asked"),  # a redirection writes a file no rule names
        ("pytest -q 2>&1 >/dev/null", "asked"),
        ("eval pytest", "asked"),
        # exact rules are exact
        ("git status --short", "asked"),
        ("git status $X", "asked"),
        ("npm run test -- --watch", "asked"),
        ("npm run", "asked"),
        ("git push", "asked"),
        # prefix words are whole words
        ("pytestx", "asked"),
        ("echo done", "asked"),  # no rule names echo
        ("sudo pytest", "denied"),  # the bundle blocks sudo: no rule reaches a denial
    ],
)
def test_a_command_rule_matches_only_when_every_program_of_the_parsed_line_matches(
    line: str, expected: str
) -> None:
    policy = enforcer(SHELL, rules=SHELL_RULES)
    assert verdict(policy, COMMAND_RULES, run(line), Capability.SHELL_EXEC) == expected


def test_a_rule_naming_a_builtin_answers_a_line_of_builtins() -> None:
    policy = enforcer(SHELL, rules=SHELL_RULES)
    assert verdict(policy, saved(command("echo *")), run("echo done"), Capability.SHELL_EXEC) == "rule echo *"


def test_windows_command_rules_ignore_case_as_cmd_does() -> None:
    policy = enforcer(SHELL, rules=SHELL_RULES, os_family=OsFamily.WINDOWS)
    rules = saved(command("pytest *"), os_family=OsFamily.WINDOWS, root="C:\\proj")
    assert verdict(policy, rules, run("PYTEST -q"), Capability.SHELL_EXEC) == "rule pytest *"
    assert verdict(policy, rules, run("pytest -q & del /q x"), Capability.SHELL_EXEC) == "asked"


# ------------------------------------------------------------------ the bundle's floor and denials

# The table of the issue: "it never allows what the policy bundle denies and never skips an approval
# the bundle itself requires"; a rule answers only prompts raised by the user's approval mode.
BUNDLE_CASES: list[
    tuple[str, dict[str, Any], PermissionRule, ToolCallFacts, Capability, ApprovalMode, str]
] = [
    (
        "mode prompt for a command",
        SHELL,
        command("pytest *"),
        run("pytest"),
        Capability.SHELL_EXEC,
        ApprovalMode.ON_RISKY_ACTIONS,
        "rule pytest *",
    ),
    (
        "always mode prompt for a command",
        SHELL,
        command("pytest *"),
        run("pytest"),
        Capability.SHELL_EXEC,
        ApprovalMode.ALWAYS,
        "rule pytest *",
    ),
    (
        "grant requiresApproval",
        {**SHELL, "requiresApproval": True},
        command("pytest *"),
        run("pytest"),
        Capability.SHELL_EXEC,
        ApprovalMode.ON_RISKY_ACTIONS,
        "asked",
    ),
    (
        "grant requiresApproval, never mode",
        {**SHELL, "requiresApproval": True},
        command("pytest *"),
        run("pytest"),
        Capability.SHELL_EXEC,
        ApprovalMode.NEVER,
        "asked",
    ),
    (
        "approvalCommands of the bundle",
        {**SHELL, "approvalCommands": ["rm", "git push"]},
        command("rm *"),
        run("rm -rf build"),
        Capability.SHELL_EXEC,
        ApprovalMode.ON_RISKY_ACTIONS,
        "asked",
    ),
    (
        "approvalCommands words anywhere in the arguments",
        {**SHELL, "approvalCommands": ["git push"]},
        command("git *"),
        run("git -C . push --force"),
        Capability.SHELL_EXEC,
        ApprovalMode.ON_RISKY_ACTIONS,
        "asked",
    ),
    (
        "approvalCommands through xargs",
        {**SHELL, "approvalCommands": ["rm"]},
        command("xargs *"),
        run("xargs rm"),
        Capability.SHELL_EXEC,
        ApprovalMode.ON_RISKY_ACTIONS,
        "asked",
    ),
    (
        "a command the bundle blocks",
        SHELL,
        command("sudo *"),
        run("sudo ls"),
        Capability.SHELL_EXEC,
        ApprovalMode.ON_RISKY_ACTIONS,
        "denied",
    ),
    (
        "a command not in allowedCommands",
        {**SHELL, "allowedCommands": ["ls"]},
        command("pytest *"),
        run("pytest"),
        Capability.SHELL_EXEC,
        ApprovalMode.ALWAYS,
        "denied",
    ),
    (
        "a line the policy cannot verify",
        SHELL,
        command("eval *"),
        run("eval ls"),
        Capability.SHELL_EXEC,
        ApprovalMode.ON_RISKY_ACTIONS,
        "asked",
    ),
    (
        "a write in the project under always mode",
        {"name": "File.Write", "allowedPaths": [ROOT]},
        path("src/**"),
        write(f"{ROOT}/src/a.py"),
        Capability.FILE_WRITE,
        ApprovalMode.ALWAYS,
        "rule src/**",
    ),
    (
        "a write to a blocked path",
        {"name": "File.Write", "allowedPaths": [ROOT], "blockedPaths": [f"{ROOT}/.git"]},
        path("**"),
        write(f"{ROOT}/.git/config"),
        Capability.FILE_WRITE,
        ApprovalMode.ALWAYS,
        "denied",
    ),
    (
        "a write outside the allowed paths",
        {"name": "File.Write", "allowedPaths": [ROOT]},
        path("**"),
        write("/etc/passwd"),
        Capability.FILE_WRITE,
        ApprovalMode.ALWAYS,
        "denied",
    ),
    (
        "a write outside the project the bundle allows: risky, and no path rule reaches it",
        {"name": "File.Write"},
        path("**"),
        write("/home/u/other/a.py"),
        Capability.FILE_WRITE,
        ApprovalMode.ON_RISKY_ACTIONS,
        "asked",
    ),
    (
        "a delete the bundle requires approval for",
        {"name": "File.Delete", "allowedPaths": [ROOT], "requiresApproval": True},
        path("src/**"),
        delete(f"{ROOT}/src/a.py"),
        Capability.FILE_DELETE,
        ApprovalMode.ON_RISKY_ACTIONS,
        "asked",
    ),
    (
        "a request to a domain the mode asks about",
        {"name": "Network.Http"},
        domain("example.com"),
        fetch("https://example.com/x"),
        Capability.NETWORK_HTTP,
        ApprovalMode.ON_RISKY_ACTIONS,
        "rule example.com",
    ),
    (
        "a request the bundle requires approval for",
        {"name": "Network.Http", "requiresApproval": True},
        domain("example.com"),
        fetch("https://example.com/x"),
        Capability.NETWORK_HTTP,
        ApprovalMode.ON_RISKY_ACTIONS,
        "asked",
    ),
    (
        "a domain outside allowedDomains",
        {"name": "Network.Http", "allowedDomains": ["api.example.com"]},
        domain("evil.net"),
        fetch("https://evil.net/"),
        Capability.NETWORK_HTTP,
        ApprovalMode.ALWAYS,
        "denied",
    ),
]


@pytest.mark.parametrize(
    ("grant", "rule", "facts", "capability", "mode", "expected"),
    [case[1:] for case in BUNDLE_CASES],
    ids=[case[0] for case in BUNDLE_CASES],
)
def test_a_rule_never_overrides_a_bundle_denial_or_a_bundle_required_approval(
    grant: dict[str, Any],
    rule: PermissionRule,
    facts: ToolCallFacts,
    capability: Capability,
    mode: ApprovalMode,
    expected: str,
) -> None:
    policy = enforcer(grant, rules=SHELL_RULES if grant.get("approvalRuleId") else None)
    assert verdict(policy, saved(rule), facts, capability, mode) == expected


def test_bundle_approval_commands_ask_in_every_mode_and_leave_other_commands_to_the_mode() -> None:
    policy = enforcer({**SHELL, "approvalCommands": ["rm", "git push"]}, rules=SHELL_RULES)
    for mode in ApprovalMode:
        outcome = policy.check(
            run("git push origin main"), Capability.SHELL_EXEC, now=NOW, approval_mode=mode
        )
        assert isinstance(outcome, ApprovalRequired), mode
        assert "The policy asks before every git push command." in outcome.notes
    never = policy.check(run("git status"), Capability.SHELL_EXEC, now=NOW, approval_mode=ApprovalMode.NEVER)
    assert not isinstance(never, ApprovalRequired | Denied)


# ------------------------------------------------------------------ paths and domains


@pytest.mark.parametrize(
    ("pattern", "file", "matches"),
    [
        ("src/**", f"{ROOT}/src/a.py", True),
        ("src/**", f"{ROOT}/src/deep/er/a.py", True),
        ("src/**", f"{ROOT}/srcx/a.py", False),
        ("src/**", f"{ROOT}/lib/src/a.py", False),
        ("docs/*.md", f"{ROOT}/docs/a.md", True),
        ("docs/*.md", f"{ROOT}/docs/sub/a.md", False),  # * stays inside one component
        ("docs/*.md", f"{ROOT}/docs/a.mdx", False),
        ("**/*.py", f"{ROOT}/a.py", True),
        ("**/*.py", f"{ROOT}/x/y/a.py", True),
        ("README.md", f"{ROOT}/README.md", True),
        ("README.md", f"{ROOT}/readme.md", False),
        ("**", "/home/u/projx/a.py", False),  # a sibling folder that shares the prefix
        ("**", "/home/u/other/a.py", False),
        ("**/*", "/home/u/a.py", False),
    ],
)
def test_path_rules_match_whole_components_inside_the_project_only(
    pattern: str, file: str, matches: bool
) -> None:
    policy = enforcer({"name": "File.Write"})
    expected = f"rule {pattern}" if matches else "asked"
    assert (
        verdict(policy, saved(path(pattern)), write(file), Capability.FILE_WRITE, ApprovalMode.ALWAYS)
        == expected
    )


def test_windows_path_rules_ignore_case_and_separators() -> None:
    policy = enforcer({"name": "File.Write"}, os_family=OsFamily.WINDOWS)
    rules = saved(path("src/**"), os_family=OsFamily.WINDOWS, root="C:\\Proj")
    facts = write("C:\\proj\\SRC\\a.py", root="C:\\Proj")
    assert verdict(policy, rules, facts, Capability.FILE_WRITE, ApprovalMode.ALWAYS) == "rule src/**"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/a", "rule example.com"),
        ("https://EXAMPLE.com./a", "rule example.com"),
        ("https://api.github.com/repos", "rule *.github.com"),
        ("https://a.b.github.com/", "rule *.github.com"),
        ("https://github.com/", "asked"),  # *.domain is its subdomains only, as in allowedDomains
        ("https://evil-example.com/", "asked"),
        ("https://example.com.evil.net/", "asked"),
        ("https://example.com@evil.net/", "denied"),  # the policy refuses user info in a URL
    ],
)
def test_domain_rules_match_as_allowed_domains_do(url: str, expected: str) -> None:
    policy = enforcer({"name": "Network.Http"})
    rules = saved(domain("example.com"), domain("*.github.com"))
    assert verdict(policy, rules, fetch(url), Capability.NETWORK_HTTP) == expected


# ------------------------------------------------------------------ what the button would save


@pytest.mark.parametrize(
    ("line", "suggested"),
    [
        ("pytest -q tests/", ["pytest *"]),
        ("git status --short", ["git status *"]),
        ("cd web && npm run build", ["npm run *"]),
        ("ls -la | grep -n x", ["ls *", "grep *"]),
        ("FOO=1 make", None),
        ("pytest > out.txt", None),
    ],
)
def test_the_suggested_rule_covers_each_program_of_the_line(line: str, suggested: list[str] | None) -> None:
    policy = enforcer(SHELL, rules=SHELL_RULES)
    outcome = policy.check(
        run(line), Capability.SHELL_EXEC, now=NOW, approval_mode=ApprovalMode.ON_RISKY_ACTIONS
    )
    assert isinstance(outcome, ApprovalRequired)
    rules = saved().suggest(outcome, Capability.SHELL_EXEC)
    assert (None if rules is None else [rule.pattern for rule in rules]) == suggested
    if rules is not None:  # and what it saves answers that very line next time
        assert saved(*rules).answering(outcome, Capability.SHELL_EXEC) is not None


def test_no_rule_is_suggested_for_a_prompt_the_bundle_requires() -> None:
    policy = enforcer({**SHELL, "approvalCommands": ["rm"]}, rules=SHELL_RULES)
    outcome = policy.check(
        run("rm x"), Capability.SHELL_EXEC, now=NOW, approval_mode=ApprovalMode.ON_RISKY_ACTIONS
    )
    assert isinstance(outcome, ApprovalRequired)
    assert saved().suggest(outcome, Capability.SHELL_EXEC) is None


def test_suggested_path_and_domain_rules() -> None:
    policy = enforcer({"name": "File.Write"}, {"name": "Network.Http"})
    written = policy.check(
        write(f"{ROOT}/src/app/main.py"), Capability.FILE_WRITE, now=NOW, approval_mode=ApprovalMode.ALWAYS
    )
    fetched = policy.check(
        fetch("https://api.example.com/v1"),
        Capability.NETWORK_HTTP,
        now=NOW,
        approval_mode=ApprovalMode.ALWAYS,
    )
    assert isinstance(written, ApprovalRequired)
    assert isinstance(fetched, ApprovalRequired)
    assert saved().suggest(written, Capability.FILE_WRITE) == [path("src/app/**")]
    assert saved().suggest(fetched, Capability.NETWORK_HTTP) == [domain("api.example.com")]
