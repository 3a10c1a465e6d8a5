"""``cowork-agent-runtime mcp probe``, run as a real process against servers on loopback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

from agent_runtime.tool_runtime.mcp.probe import example_arguments
from tests.agent_runtime.tool_runtime.mcp.fixtures import Served, edge, sdk
from tests.support.mcp_oauth_server import OAuthTestServer
from tests.support.mcp_servers import SDK_TOOLS, sdk_server
from tests.support.peers import REPO_ROOT

__all__ = ["edge", "sdk"]


def _probe(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_runtime", "mcp", "probe", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _line(output: str, start: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(start))


def test_probe_lists_and_calls_every_tool_and_exits_0(sdk: Served) -> None:
    done = _probe(sdk.url, "--allow-insecure-loopback", "--timeout", "30")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "protocol 2025-11-25, server cowork-test 1.0" in _line(out, "initialize ")
    assert f"{len(SDK_TOOLS)} tools" in _line(out, "tools/list ")
    assert "rejected" in _line(out, "  tool bad_schema ")
    assert "rejected" in _line(out, "  tool bad_dialect ")
    assert " ok " in _line(out, "tools/call add ")
    assert "tool error" in _line(out, "tools/call fail ")
    assert "rejected" in _line(out, "tools/call wrong_shape ")
    # Headless elicitation: the defaults are accepted; a required field without one is declined.
    assert '"action": "accept"' in _line(out, "tools/call ask ")
    assert '"action": "decline"' in _line(out, "tools/call ask_required ")
    assert "survived the cut" in _line(out, "tools/call cut ")
    assert "tools/call bad_schema" not in out
    assert _line(out, "close ")
    assert sdk.log.deletes, "the probe ends its session"
    assert sdk.log.methods.count("tools/call") == len(SDK_TOOLS) - 2  # all but the two malformed


def test_probe_calls_only_the_named_tool_with_the_given_arguments(sdk: Served) -> None:
    done = _probe(
        sdk.url, "--allow-insecure-loopback", "--call", "echo", "--args", '{"text": "from the probe"}'
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "from the probe" in _line(done.stdout, "tools/call echo ")
    assert sdk.log.methods.count("tools/call") == 1


def test_a_json_rpc_error_is_an_answer(sdk: Served) -> None:
    done = _probe(sdk.url, "--allow-insecure-loopback", "--call", "no_such_tool")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Unknown tool" in _line(done.stdout, "tools/call no_such_tool ")


def test_a_call_without_an_answer_exits_1(edge: Callable[..., Served]) -> None:
    served = edge(hang=True)
    done = _probe(served.url, "--allow-insecure-loopback", "--timeout", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED" in _line(done.stdout, "tools/call echo ")
    assert "did not answer tools/call within 1 s" in done.stdout
    assert served.log.deletes == ["edge-session"]


def test_probe_authorizes_headlessly_with_oauth() -> None:
    app, log = sdk_server()
    with OAuthTestServer(inner_app=app) as server:
        done = _probe(
            server.mcp_url, "--allow-insecure-loopback", "--call", "echo", "--args", '{"text": "signed in"}'
        )
        hits = list(server.records.hits)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "signed in" in _line(done.stdout, "tools/call echo ")
    assert "GET /authorize" in hits
    assert "POST /token" in hits
    assert log.methods.count("tools/call") == 1


def test_headers_and_a_token_are_sent(edge: Callable[..., Served]) -> None:
    served = edge()
    done = _probe(served.url, "--allow-insecure-loopback", "--header", "X-Team: blue", "--token", "s3cret")
    assert done.returncode == 0, done.stdout + done.stderr
    first = served.log.headers[0]
    assert first["x-team"] == "blue"
    assert first["authorization"] == "Bearer s3cret"


def test_an_unreachable_server_exits_1() -> None:
    done = _probe("http://127.0.0.1:9/mcp", "--allow-insecure-loopback", "--timeout", "10")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED" in _line(done.stdout, "initialize ")


def test_plain_http_without_the_opt_in_exits_1() -> None:
    done = _probe("http://127.0.0.1:9/mcp")
    assert done.returncode == 1
    assert "allowInsecureLoopback" in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["https://x.example", "--args", "{}"],
        ["https://x.example", "--call", "t", "--args", "[1]"],
        ["https://x.example", "--header", "novalue"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert _probe(*args).returncode == 2


def test_mcp_without_a_command_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agent_runtime", "mcp"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "probe" in done.stderr


def test_example_arguments_follow_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 10},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "limit": {"type": "integer", "default": 5},
            "ratio": {"type": "number", "minimum": 2},
            "when": {"type": "string", "format": "date"},
            "flags": {"type": "array", "items": {"type": "boolean"}, "minItems": 2},
            "where": {
                "type": "object",
                "properties": {"city": {"type": "string", "examples": ["Oslo"]}},
                "required": ["city"],
            },
            "maybe": {"type": ["null", "integer"]},
            "either": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
            "optional": {"type": "string"},
        },
        "required": ["q", "mode", "limit", "ratio", "when", "flags", "where", "maybe", "either"],
    }
    assert example_arguments(schema) == {
        "q": "examplexxx",
        "mode": "fast",
        "limit": 5,
        "ratio": 2.0,
        "when": "2025-01-01",
        "flags": [False, False],
        "where": {"city": "Oslo"},
        "maybe": 1,
        "either": False,
    }
    assert example_arguments({"type": "object"}) == {}
