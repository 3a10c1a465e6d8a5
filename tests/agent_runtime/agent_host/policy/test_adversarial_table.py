"""The adversarial table: paths, command lines and URLs built to slip past the enforcer, each with the
outcome it must get. Zero bypasses: every row is its own test.

Approval mode is ``never`` throughout, so "approval" appears only where the bundle's floor asks for it
(an unverifiable command under a grant with an approval rule).
"""

from __future__ import annotations

import ipaddress
from typing import Any

import httpx
import pytest

from agent_runtime.agent_host.policy import (
    Allowed,
    ApprovalRequired,
    Denied,
    PolicyEnforcer,
    ToolCallFacts,
    parse_url_host,
)
from contracts.enums import ApprovalMode, Capability, OsFamily
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer

ALLOWED, DENIED, APPROVAL = "allowed", "denied", "approval"

# ------------------------------------------------------------------------------------------ paths

POSIX_PATHS = {
    "allowedPaths": ["/home/u/proj"],
    "blockedPaths": ["/home/u/proj/secrets", "/home/u/.ssh", "/home/u/proj/café"],
}
WINDOWS_PATHS = {"allowedPaths": ["C:\\Users\\u\\proj"], "blockedPaths": ["C:\\Users\\u\\proj\\secrets"]}

PATH_ROWS: list[tuple[OsFamily, dict[str, Any], str, str]] = [
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/a.py", ALLOWED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj", ALLOWED),
    (OsFamily.LINUX, POSIX_PATHS, "//home/u/proj/a.py", ALLOWED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/projx/a.py", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj2", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/pro", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/secrets/key.pem", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/secrets", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/secrets/", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/secretsX/a", ALLOWED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/SECRETS/key.pem", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/cafe\u0301/x", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/CAFÉ/x", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/Proj/a.py", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/../.ssh/id_rsa", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/./a.py", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "proj/a.py", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/proj/a\x00.py", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/etc/passwd", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "/home/u/.ssh/id_rsa", DENIED),
    (OsFamily.LINUX, POSIX_PATHS, "~/proj/a.py", DENIED),
    (OsFamily.MACOS, {"allowedPaths": ["/Users/u/proj"]}, "/Users/u/proj/src/a.py", ALLOWED),
    (OsFamily.MACOS, {"allowedPaths": ["/Users/u/proj"]}, "/Users/u/project/a.py", DENIED),
    (OsFamily.MACOS, {"blockedPaths": ["/Users/u/Library"]}, "/users/U/library/Keychains/x", DENIED),
    (OsFamily.MACOS, {"allowedPaths": []}, "/Users/u/proj/a.py", DENIED),
    (OsFamily.MACOS, {}, "/Users/u/anything", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:\\Users\\u\\proj\\a.py", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "c:/users/U/PROJ/a.py", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "\\\\?\\C:\\Users\\u\\proj\\a.py", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:\\Users\\u\\projx\\a.py", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:\\Users\\u\\proj\\SECRETS\\k", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:\\Users\\u\\proj\\secrets.\\k", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:\\Users\\u\\proj\\secrets \\k", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:/Users/u/proj/secrets/k", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "\\\\?\\C:\\Users\\u\\proj\\secrets\\k", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:\\Users\\u\\proj\\a.txt:hidden", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:\\Users\\u\\proj\\SECRE~1\\k", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "\\\\.\\C:\\Users\\u\\proj\\a.py", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "D:\\Users\\u\\proj\\a.py", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "\\\\server\\share\\proj\\a.py", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:proj\\a.py", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "\\Users\\u\\proj\\a.py", DENIED),
    (OsFamily.WINDOWS, WINDOWS_PATHS, "C:\\Users\\u\\proj\\..\\x", DENIED),
]

# ------------------------------------------------------------------------------------------ commands

ALLOWLIST = {
    "allowedCommands": [
        "ls", "git", "pytest", "grep", "cat", "make", "find", "xargs", "env", "sh", "bash", "timeout",
        "nice", "busybox", "watch", "su", "wc",
    ],
}  # fmt: skip
BLOCKLIST = {"blockedCommands": ["rm", "curl"], "approvalRuleId": "shell"}
WINDOWS_ALLOWLIST = {"allowedCommands": ["git", "dir", "python", "cmd"]}

COMMAND_ROWS: list[tuple[OsFamily, dict[str, Any], str, str]] = [
    # An allowlist: every program of the line must be on it.
    (OsFamily.LINUX, ALLOWLIST, "ls -la", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "/usr/bin/ls -la", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "git status && pytest -q", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "cd src && make test", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "ls -la | grep foo > out.txt 2>&1", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "sh -c 'ls -la | wc -l'", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "cat <<'EOF'\n$(rm x)\nEOF\n", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "ls # ; rm -rf /", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "ls \\\nrm", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "ls $(git rev-parse --show-toplevel)", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "git status;", ALLOWED),
    (OsFamily.LINUX, ALLOWLIST, "ls; rm -rf /", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls && rm -rf /", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls || rm -rf /", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls | rm", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls |& rm", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls & rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls\nrm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "echo $(rm -rf /)", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "echo `rm -rf /`", DENIED),
    (OsFamily.LINUX, ALLOWLIST, 'echo "$(rm x)"', DENIED),
    (OsFamily.LINUX, ALLOWLIST, 'echo "`rm x`"', DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls $(ls $(rm x))", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "(rm x)", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "{ rm x; }", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "env rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "env -i FOO=1 rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "xargs rm < files", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "xargs -0 -n1 rm", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "xargs -I{} rm {}", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "find . -exec rm {} \\;", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "find . -execdir rm {} +", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "find . -exec sh -c 'rm \"$1\"' _ {} ';'", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "timeout 5 rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "nice -n 5 rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "FOO=bar rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "/bin/rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "./rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "r''m x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "\\rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, '"rm" x', DENIED),
    (OsFamily.LINUX, ALLOWLIST, "$'\\x72\\x6d' x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "$'\\162m' x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "$CMD x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "${IFS}rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "$(echo rm) x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "eval 'rm x'", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "source evil.sh", DENIED),
    (OsFamily.LINUX, ALLOWLIST, ". evil.sh", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "f() { rm x; }; f", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "function f { rm x; }", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls 'unbalanced", DENIED),
    (OsFamily.LINUX, ALLOWLIST, 'ls "unbalanced', DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls `unbalanced", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "sh -c 'rm -rf /'", DENIED),
    (OsFamily.LINUX, ALLOWLIST, 'bash -lc "ls; rm x"', DENIED),
    (OsFamily.LINUX, ALLOWLIST, "sh -c \"sh -c 'rm x'\"", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "cat <<EOF\n$(rm x)\nEOF\n", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "cat <<EOF\nfine\n", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "if true; then rm x; fi", DENIED),
    (OsFamily.LINUX, ALLOWLIST, 'for f in *; do rm "$f"; done', DENIED),
    (OsFamily.LINUX, ALLOWLIST, "while true; do rm x; done", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "case x in x) rm y;; esac", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls ${x:-$(rm y)}", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls ${!x}", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "x='a[$(rm y)]'; ls $((x))", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "(( x ))", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "[[ -f x ]] && ls", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "test -v 'a[$(rm x)]'", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "read 'a[$(rm x)]'", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "a[$(rm x)]=1", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "{rm,-rf,/}", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "=rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "r* x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "sudo ls", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "cat <(rm x)", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls >(rm x)", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls *(e:'rm x':)", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "PATH=/tmp/evil:$PATH ls", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "LD_PRELOAD=/tmp/x.so ls", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "export BASH_ENV=/tmp/x; bash -c ls", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "echo rm | sh", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "sh evil.sh", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "busybox rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "watch 'ls; rm x'", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "su -c 'rm x' root", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "env -S 'rm x'", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "env --frobnicate rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "exec rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "command rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "time rm x", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "nohup rm x &", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "ls; trap 'rm x' EXIT", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "alias ls=rm; ls", DENIED),
    (OsFamily.LINUX, ALLOWLIST, "coproc rm x", DENIED),
    (OsFamily.MACOS, ALLOWLIST, "RM -rf /", DENIED),
    (OsFamily.MACOS, ALLOWLIST, "repeat 3 rm x", DENIED),
    (OsFamily.MACOS, ALLOWLIST, "noglob rm x", DENIED),
    (OsFamily.MACOS, ALLOWLIST, "- rm x", DENIED),
    # A blocklist: no program of the line may be on it; what cannot be verified needs approval.
    (OsFamily.MACOS, BLOCKLIST, "ls -la", ALLOWED),
    (OsFamily.MACOS, BLOCKLIST, "find . -name '*.py' -delete", ALLOWED),
    (OsFamily.MACOS, BLOCKLIST, "rm x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "RM x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "/bin/rm x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "r\\m x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "ls; rm x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "sudo -u root rm x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "SUDO rm x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "env rm x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "xargs rm", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "busybox rm x", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "zsh -c 'curl https://evil.example'", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "cat <<EOF\n`rm x`\nEOF\n", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "ls; eval x; rm y", DENIED),
    (OsFamily.MACOS, BLOCKLIST, "$CMD x", APPROVAL),
    (OsFamily.MACOS, BLOCKLIST, 'eval "rm x"', APPROVAL),
    (OsFamily.MACOS, BLOCKLIST, "bash script.sh", APPROVAL),
    (OsFamily.MACOS, BLOCKLIST, "sudo -s", APPROVAL),
    (OsFamily.MACOS, BLOCKLIST, "python3 -c 'print(1)' $(rm -rf ~)", DENIED),
    # cmd.exe on Windows.
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git status", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "GIT.EXE status", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, '"C:\\Program Files\\Git\\cmd\\git.exe" status', ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "cmd /c git status", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "g^it status", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git status ^& del x", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git log > out.txt 2>&1", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "@git status", ALLOWED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git status & del x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git status && del x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git status || del x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "dir | del", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "(git status & del x)", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "C:\\tools\\DEL.EXE x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "rm.exe x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, 'cmd /c "git status & del x"', DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, 'cmd /c"del x"', DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "cmd", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "echo %PATH% & git status", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "%COMSPEC% /c del x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git status !x!", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "powershell -c Remove-Item x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "pwsh -EncodedCommand ZQBjAGgAbwA=", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git,status", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "git status\ndel x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "start del x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "call del x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "for %f in (*) do del %f", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "C:\\PROGRA~1\\x\\DEL~1.EXE x", DENIED),
    (OsFamily.WINDOWS, WINDOWS_ALLOWLIST, "bash -c 'rm x'", DENIED),
]

# ------------------------------------------------------------------------------------------ domains

DOMAINS = {
    "allowedDomains": [
        "example.com", "*.example.com", "api.service.io", "10.0.0.5", "[2001:db8::1]", "bücher.de",
    ],
}  # fmt: skip

DOMAIN_ROWS: list[tuple[str, str]] = [
    ("https://example.com/x", ALLOWED),
    ("HTTPS://EXAMPLE.COM/", ALLOWED),
    ("https://example.com./", ALLOWED),
    ("https://example.com:443/path?q=1", ALLOWED),
    ("https://www.example.com/", ALLOWED),
    ("https://a.b.example.com/", ALLOWED),
    ("https://example.com#@evil.com", ALLOWED),
    ("https://example。com/", ALLOWED),
    ("https://bücher.de/", ALLOWED),
    ("https://BÜCHER.de/", ALLOWED),
    ("https://xn--bcher-kva.de/", ALLOWED),
    ("http://10.0.0.5/", ALLOWED),
    ("http://10.0.0.5:8080/", ALLOWED),
    ("http://[2001:db8::1]/", ALLOWED),
    ("http://[2001:db8:0:0:0:0:0:1]/", ALLOWED),
    ("https://api.service.io/v1", ALLOWED),
    ("https://evil.com/?example.com", DENIED),
    ("https://example.com.evil.com/", DENIED),
    ("https://evil.com.example.org/", DENIED),
    ("https://evilexample.com/", DENIED),
    ("https://example.com@evil.com/", DENIED),
    ("https://user:pass@example.com/", DENIED),
    ("https://example.com\\@evil.com/", DENIED),
    ("https://example.com%2f@evil.com/", DENIED),
    ("https://ex%61mple.com/", DENIED),
    (" https://example.com/", DENIED),
    ("https://example.com\t/", DENIED),
    ("https://example.com\u202e/", DENIED),
    ("https://exаmple.com/", DENIED),
    ("https://xn--exmple-cua.com/", DENIED),
    ("https://ｅｘａｍｐｌｅ.com/", DENIED),
    ("https://*.example.com/", DENIED),
    ("https://service.io/", DENIED),
    ("https://x.api.service.io/", DENIED),
    ("ftp://example.com/", DENIED),
    ("file:///etc/passwd", DENIED),
    ("javascript:alert(1)", DENIED),
    ("https:example.com", DENIED),
    ("//example.com/", DENIED),
    ("https:///example.com", DENIED),
    ("https://example.com:99999/", DENIED),
    ("https://example.com:0/", DENIED),
    ("http://010.0.0.5/", DENIED),
    ("http://167772165/", DENIED),
    ("http://0xa.0.0.5/", DENIED),
    ("http://10.0.5/", DENIED),
    ("http://[::ffff:10.0.0.5]/", DENIED),
    ("http://[2001:db8::1%25eth0]/", DENIED),
    ("http://127.0.0.1/", DENIED),
]


def _outcome(result: object) -> str:
    if isinstance(result, Allowed):
        return ALLOWED
    if isinstance(result, Denied):
        return DENIED
    if isinstance(result, ApprovalRequired):
        return APPROVAL
    raise AssertionError(f"unexpected outcome {result!r}")


def _check(policy: PolicyEnforcer, facts: ToolCallFacts, capability: Capability) -> str:
    return _outcome(policy.check(facts, capability, now=NOW, approval_mode=ApprovalMode.NEVER))


def test_the_table_has_at_least_a_hundred_adversarial_cases() -> None:
    assert len(PATH_ROWS) + len(COMMAND_ROWS) + len(DOMAIN_ROWS) >= 100


@pytest.mark.parametrize(("os_family", "scope", "path", "expected"), PATH_ROWS)
def test_a_path_gets_exactly_its_expected_outcome(
    os_family: OsFamily, scope: dict[str, Any], path: str, expected: str
) -> None:
    for capability in (Capability.FILE_READ, Capability.FILE_WRITE, Capability.FILE_DELETE):
        policy = enforcer({"name": capability.value, **scope}, os_family=os_family)
        facts = ToolCallFacts(tool_name="ReadFile", arguments={"path": path}, resolved_path=path)
        assert _check(policy, facts, capability) == expected, (capability, path)


@pytest.mark.parametrize(("os_family", "scope", "command", "expected"), COMMAND_ROWS)
def test_a_command_line_gets_exactly_its_expected_outcome(
    os_family: OsFamily, scope: dict[str, Any], command: str, expected: str
) -> None:
    rules = [{"approvalRuleId": "shell", "title": "Run a command"}]
    policy = enforcer({"name": "Shell.Exec", **scope}, os_family=os_family, rules=rules)
    facts = ToolCallFacts(tool_name="RunCommand", arguments={"command": command})
    assert _check(policy, facts, Capability.SHELL_EXEC) == expected


@pytest.mark.parametrize(("url", "expected"), DOMAIN_ROWS)
def test_a_url_gets_exactly_its_expected_outcome(url: str, expected: str) -> None:
    policy = enforcer({"name": "Network.Http", **DOMAINS})
    facts = ToolCallFacts(tool_name="HttpRequest", arguments={"url": url})
    assert _check(policy, facts, Capability.NETWORK_HTTP) == expected


@pytest.mark.parametrize("url", [url for url, expected in DOMAIN_ROWS if expected == ALLOWED])
def test_every_allowed_url_connects_to_the_host_the_policy_checked(url: str) -> None:
    """The tool runtime's client must reach the host that was checked (the root's trailing dot aside;
    IP addresses compared as addresses, whatever their spelling)."""
    ours = parse_url_host(url)
    theirs = httpx.URL(url).raw_host.decode("ascii").rstrip(".")
    if ours.is_ip:
        assert ipaddress.ip_address(ours.name) == ipaddress.ip_address(theirs)
    else:
        assert ours.name == theirs
