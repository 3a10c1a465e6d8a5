"""Benchmark of the Local Policy Enforcer (seed 000 §8): one ``check`` per tool call, in process.

Measures the latency of a check, one call at a time, for each kind of scope — a file read under path
lists, a command line under command lists (the whole line parsed), an HTTP request under a domain
list — and of redacting a 100 KB prompt. Every sample is a fresh check: no caching.

Run: ``.venv/bin/python -m tests.benchmarks.bench_policy`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from agent_runtime.agent_host.policy import PolicyEnforcer, ToolCallFacts, redact
from contracts.enums import ApprovalMode, Capability, OsFamily
from tests.benchmarks.figures import Targets, percentile, report

NOW = datetime(2026, 2, 21, 15, tzinfo=UTC)

TARGETS: Targets = {
    "read_p50_us": ("policy check p50: ReadFile under path lists", "µs", "<=", 20.0),
    "read_p99_us": ("policy check p99: ReadFile under path lists", "µs", None, None),
    "command_p50_us": ("policy check p50: RunCommand under command lists", "µs", "<=", 20.0),
    "command_p99_us": ("policy check p99: RunCommand under command lists", "µs", None, None),
    "long_command_p50_us": ("policy check p50: 4-command pipeline line", "µs", None, None),
    "http_p50_us": ("policy check p50: HttpRequest under a domain list", "µs", "<=", 20.0),
    "http_p99_us": ("policy check p99: HttpRequest under a domain list", "µs", None, None),
    "redact_100kb_ms": ("redaction of a 100 KB prompt, p50", "ms", None, None),
}


def enforcer() -> PolicyEnforcer:
    bundle = {
        "sessionId": "bench",
        "capabilities": [
            {
                "name": "File.Read",
                "allowedPaths": ["/home/u/proj", "/home/u/lib"],
                "blockedPaths": ["/home/u/proj/.env"],
            },
            {
                "name": "Shell.Exec",
                "allowedCommands": ["pytest", "git", "ls", "grep", "wc", "make"],
                "blockedCommands": ["rm"],
            },
            {"name": "Network.Http", "allowedDomains": ["example.com", "*.example.org", "pypi.org"]},
        ],
        "llmPolicy": {
            "allowedModels": ["m"],
            "maxInputTokens": 1,
            "maxOutputTokens": 1,
            "maxSessionTokens": 1,
        },
        "expiresAt": (NOW + timedelta(hours=1)).isoformat(),
        "schemaVersion": "1.0",
        "version": "1",
    }
    return PolicyEnforcer.load(bundle, session_id="bench", now=NOW, os_family=OsFamily.MACOS)


def samples(action: Callable[[], object], iterations: int) -> list[float]:
    for _ in range(min(1000, iterations)):
        action()
    out = []
    for _ in range(iterations):
        started = time.perf_counter()
        action()
        out.append(time.perf_counter() - started)
    return out


def measure(iterations: int) -> dict[str, float]:
    policy = enforcer()
    path = "/home/u/proj/src/cowork/agent/loop.py"
    read = ToolCallFacts("ReadFile", {"path": path}, resolved_path=path, workspace_roots=("/home/u/proj",))
    command = ToolCallFacts("RunCommand", {"command": "pytest tests/ --verbose -x"})
    pipeline = ToolCallFacts(
        "RunCommand", {"command": "git ls-files | grep '\\.py$' | xargs wc -l | sort -n"}
    )
    http = ToolCallFacts("HttpRequest", {"url": "https://docs.example.org/guide/index.html?page=2"})
    mode = ApprovalMode.ON_RISKY_ACTIONS

    def check(facts: ToolCallFacts, capability: Capability) -> Callable[[], object]:
        return lambda: policy.check(facts, capability, now=NOW, approval_mode=mode)

    figures: dict[str, float] = {}
    for key, facts, capability in (
        ("read", read, Capability.FILE_READ),
        ("command", command, Capability.SHELL_EXEC),
        ("http", http, Capability.NETWORK_HTTP),
    ):
        timings = samples(check(facts, capability), iterations)
        figures[f"{key}_p50_us"] = statistics.median(timings) * 1e6
        figures[f"{key}_p99_us"] = percentile(timings, 0.99) * 1e6
    figures["long_command_p50_us"] = (
        statistics.median(samples(check(pipeline, Capability.SHELL_EXEC), iterations)) * 1e6
    )
    prompt = (
        "Here is the file you asked for:\n" + "def handler(event):\n    return event['body']\n" * 40
    ) * 50
    prompt = prompt[:100_000] + " AKIAIOSFODNN7EXAMPLE"
    figures["redact_100kb_ms"] = (
        statistics.median(samples(lambda: redact(prompt), max(5, iterations // 200))) * 1e3
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iterations", type=int, default=20_000, help="checks measured per kind")
    args = parser.parse_args(argv)
    print(f"Cowork policy benchmark: {args.iterations} checks per kind")
    print(report(measure(args.iterations), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
