"""The pieces of ``cowork exec`` without processes: exit statuses, the gateway and backend chosen from
flags, environment and settings, and the text renderer."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest

from desktop.headless.outcome import ExitCode, exit_code_for_end
from desktop.headless.render import JsonRenderer, TextRenderer
from desktop.launch.backend import configured_backend
from desktop.launch.errors import LaunchError
from desktop.launch.gateway import GatewaySettings, resolve_gateway

# ----------------------------------------------------------------------------------------- outcome


@pytest.mark.parametrize(
    ("event_type", "reason", "refusals", "code"),
    [
        ("task_completed", None, 0, ExitCode.COMPLETED),
        ("task_completed", None, 2, ExitCode.DENIED),
        ("task_cancelled", None, 0, ExitCode.CANCELLED),
        ("task_cancelled", None, 3, ExitCode.CANCELLED),
        ("task_failed", "budget_exceeded", 0, ExitCode.BUDGET_EXCEEDED),
        ("task_failed", "budget_exceeded", 1, ExitCode.BUDGET_EXCEEDED),
        ("task_failed", "llm_denied", 0, ExitCode.DENIED),
        ("task_failed", "max_steps_exceeded", 1, ExitCode.DENIED),
        ("task_failed", "max_steps_exceeded", 0, ExitCode.FAILED),
        ("task_failed", None, 0, ExitCode.FAILED),
    ],
)
def test_the_exit_status_follows_how_the_task_ended(
    event_type: str, reason: str | None, refusals: int, code: ExitCode
) -> None:
    assert exit_code_for_end(event_type, reason, refusals) is code


def test_exit_statuses_are_distinct_and_documented() -> None:
    from desktop.cli import EXEC_EPILOG

    values = [code.value for code in ExitCode]
    assert len(set(values)) == len(values)
    assert (ExitCode.USAGE, ExitCode.CONFIGURATION, ExitCode.CANCELLED) == (2, 3, 130)
    for code in ExitCode:
        assert f"  {code.value}  " in EXEC_EPILOG


# ----------------------------------------------------------------------------------------- gateway


def settings(tmp_path: Path, content: Any) -> Path:
    path = tmp_path / "settings.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.fixture(autouse=True)
def _no_keychain(monkeypatch: pytest.MonkeyPatch) -> None:
    # The OS keychain is the developer's: a token found there must not change what these tests see.
    monkeypatch.setattr("desktop.launch.gateway._keychain_token", lambda endpoint: None)


def test_flags_win_over_the_environment_which_wins_over_the_settings_file(tmp_path: Path) -> None:
    saved = settings(
        tmp_path, {"gateway": {"endpoint": "http://saved:1", "api": "openai", "model": "saved-model"}}
    )
    environ = {
        "LLM_GATEWAY_ENDPOINT": "http://env:2",
        "LLM_GATEWAY_API": "anthropic",
        "LLM_GATEWAY_MODEL": "env-model",
        "LLM_GATEWAY_AUTH_TOKEN": "env-token",
    }
    assert resolve_gateway({}, settings_file=saved) == GatewaySettings(
        "http://saved:1", "openai", "saved-model"
    )
    assert resolve_gateway(environ, settings_file=saved) == GatewaySettings(
        "http://env:2", "anthropic", "env-model", "env-token"
    )
    flagged = resolve_gateway(
        environ, endpoint="https://flag:3", api="openai", model="flag-model", settings_file=saved
    )
    assert flagged == GatewaySettings("https://flag:3", "openai", "flag-model", "env-token")
    # Each setting falls back on its own: a flag for the endpoint keeps the environment's model.
    mixed = resolve_gateway({"LLM_GATEWAY_MODEL": "env-model"}, endpoint="http://flag:4", settings_file=saved)
    assert mixed == GatewaySettings("http://flag:4", "openai", "env-model")


def test_the_keychain_is_asked_for_a_token_only_once_settings_were_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def keychain(endpoint: str) -> str:
        asked.append(endpoint)
        return "keychain-token"

    monkeypatch.setattr("desktop.launch.gateway._keychain_token", keychain)
    environ = {"LLM_GATEWAY_ENDPOINT": "http://gw:1"}
    # Never saved from Settings (a first run, CI, a script): no token of ours can be in the keychain.
    assert resolve_gateway(environ, settings_file=tmp_path / "missing.json").token is None
    assert asked == []
    saved = settings(tmp_path, {"gateway": {"endpoint": "http://gw:1"}})
    assert resolve_gateway(environ, settings_file=saved).token == "keychain-token"
    assert resolve_gateway({**environ, "LLM_GATEWAY_AUTH_TOKEN": "env"}, settings_file=saved).token == "env"
    assert asked == ["http://gw:1"]


def test_the_runtime_gets_the_gateway_in_its_own_variables() -> None:
    chosen = GatewaySettings("http://gw:1", "openai", "m", "t")
    assert chosen.environment() == {
        "LLM_GATEWAY_ENDPOINT": "http://gw:1",
        "LLM_GATEWAY_API": "openai",
        "LLM_GATEWAY_MODEL": "m",
        "LLM_GATEWAY_AUTH_TOKEN": "t",
    }
    assert GatewaySettings("http://gw:1").environment() == {
        "LLM_GATEWAY_ENDPOINT": "http://gw:1",
        "LLM_GATEWAY_API": "anthropic",
    }


def test_no_gateway_anywhere_suggests_the_demo(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="--demo"):
        resolve_gateway({}, settings_file=tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("environ", "api", "message"),
    [
        ({"LLM_GATEWAY_ENDPOINT": "http://gw:1", "LLM_GATEWAY_API": "gemini"}, None, "anthropic or openai"),
        ({"LLM_GATEWAY_ENDPOINT": "http://gw:1"}, "bedrock", "anthropic or openai"),
        ({"LLM_GATEWAY_ENDPOINT": "gw:1"}, None, "must be an http"),
    ],
)
def test_an_unusable_api_or_endpoint_is_a_launch_error(
    tmp_path: Path, environ: dict[str, str], api: str | None, message: str
) -> None:
    with pytest.raises(LaunchError, match=message):
        resolve_gateway(environ, api=api, settings_file=tmp_path / "missing.json")


def test_the_api_name_is_case_insensitive(tmp_path: Path) -> None:
    chosen = resolve_gateway(
        {"LLM_GATEWAY_ENDPOINT": "http://gw:1", "LLM_GATEWAY_API": "OpenAI"},
        settings_file=tmp_path / "missing.json",
    )
    assert chosen.api == "openai"


def test_a_settings_file_that_is_not_json_is_a_launch_error_naming_it(tmp_path: Path) -> None:
    broken = settings(tmp_path, "{not json")
    with pytest.raises(LaunchError, match=r"settings file .*settings\.json cannot be read"):
        resolve_gateway({}, settings_file=broken)


@pytest.mark.parametrize("content", [[1, 2], {"gateway": "http://x"}, {"other": {}}, {"gateway": {"api": 3}}])
def test_settings_without_a_usable_gateway_are_ignored(tmp_path: Path, content: Any) -> None:
    with pytest.raises(LaunchError, match="No LLM gateway is configured"):
        resolve_gateway({}, settings_file=settings(tmp_path, content))


# ----------------------------------------------------------------------------------------- backend


def jwt(claims: Any) -> str:
    def part(data: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'EdDSA', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


def test_no_backend_url_means_the_embedded_backend() -> None:
    assert configured_backend({}) is None
    assert configured_backend({"COWORK_BACKEND_URL": "  ", "COWORK_BACKEND_TOKEN": "x"}) is None


def test_the_tenant_and_user_are_read_from_the_token() -> None:
    token = jwt({"tid": "acme", "sub": "alice", "exp": 1})
    keys = [{"keyId": "k1", "algorithm": "Ed25519", "publicKey": "abc"}]
    access = configured_backend(
        {
            "COWORK_BACKEND_URL": "https://backend.example/",
            "COWORK_BACKEND_TOKEN": f" {token} ",
            "COWORK_POLICY_KEYS": json.dumps(keys),
        }
    )
    assert access is not None
    assert (access.url, access.token, access.tenant_id, access.user_id) == (
        "https://backend.example",
        token,
        "acme",
        "alice",
    )
    assert access.policy_keys == keys
    without_keys = configured_backend({"COWORK_BACKEND_URL": "http://b", "COWORK_BACKEND_TOKEN": token})
    assert without_keys is not None
    assert without_keys.policy_keys is None


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("", "COWORK_BACKEND_TOKEN is not"),
        ("not-a-jwt", "not a JWT"),
        ("a.b", "not a JWT"),
        ("a.!!!.c", "not a JWT"),
        (f"a.{base64.urlsafe_b64encode(b'[1]').decode()}.c", "not a JWT"),
        (jwt({"sub": "alice"}), r"no tenant \(tid\)"),
        (jwt({"tid": "acme"}), r"user \(sub\)"),
        (jwt({"tid": "", "sub": "alice"}), "no tenant"),
        (jwt({"tid": 7, "sub": "alice"}), "no tenant"),
    ],
)
def test_an_unusable_backend_token_is_a_launch_error(token: str, message: str) -> None:
    with pytest.raises(LaunchError, match=message):
        configured_backend({"COWORK_BACKEND_URL": "http://b", "COWORK_BACKEND_TOKEN": token})


def test_policy_keys_that_are_not_json_are_a_launch_error() -> None:
    environ = {
        "COWORK_BACKEND_URL": "http://b",
        "COWORK_BACKEND_TOKEN": jwt({"tid": "t", "sub": "u"}),
        "COWORK_POLICY_KEYS": "[not json",
    }
    with pytest.raises(LaunchError, match="COWORK_POLICY_KEYS is not JSON"):
        configured_backend(environ)


# ---------------------------------------------------------------------------------------- renderer


def event(kind: str, **payload: Any) -> dict[str, Any]:
    return {"eventType": kind, "payload": payload}


def rendered(*events: dict[str, Any], notes: tuple[str, ...] = ()) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    renderer = TextRenderer(out, err)
    for note in notes:
        renderer.note(note)
    for each in events:
        renderer.event(each)
    renderer.finish()
    return out.getvalue(), err.getvalue()


def test_a_tool_line_after_partial_text_starts_the_text_on_a_new_line() -> None:
    out, err = rendered(
        event("text_chunk", text="Let me "),
        event("text_chunk", text="look."),
        event("tool_requested", toolName="ReadFile", target="README.md"),
        event("tool_completed", toolName="ReadFile", status="succeeded", latencyMs=3),
        event("text_chunk", text="It says hi."),
    )
    assert out == "Let me look.\nIt says hi.\n"
    assert err == "→ ReadFile README.md\n✓ ReadFile (3 ms)\n"


def test_text_that_ends_its_line_gets_no_extra_newline() -> None:
    out, _ = rendered(
        event("text_chunk", text="Done.\n"),
        event("tool_requested", toolName="RunCommand", target="ls"),
        event("text_chunk", text=""),
    )
    assert out == "Done.\n"


def test_failures_and_denials_are_one_short_line() -> None:
    _, err = rendered(
        event("tool_requested", toolName="RunCommand"),
        event("tool_completed", toolName="RunCommand", status="denied", error={"message": "Not\n approved"}),
        event("task_failed", reason="llm_error", error={"message": "x" * 1000}),
        event("task_cancelled"),
        event("session_paused", error={"message": "gateway down"}),
        event("step_limit_approaching", stepCount=8, maxSteps=10),
        event("llm_request_started"),
    )
    lines = err.splitlines()
    assert lines[:2] == ["→ RunCommand", "✗ RunCommand denied: Not approved"]
    assert lines[2].startswith("✗ task failed: llm_error — xxx")
    assert lines[2].endswith("…")
    assert len(lines[2]) < 560
    assert lines[3:] == [
        "task cancelled",
        "! session paused: gateway down",
        "! step 8 of 10: the step limit is near",
    ]


def test_the_json_renderer_writes_each_event_unchanged_on_one_line() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = JsonRenderer(out, err)
    first = {"eventType": "text_chunk", "payload": {"text": "multi\nline “quoted”"}, "sessionId": "s"}
    renderer.event(first)
    renderer.event(event("task_completed"))
    renderer.note("session s")
    renderer.finish()
    lines = out.getvalue().splitlines()
    assert [json.loads(line) for line in lines] == [first, event("task_completed")]
    assert "“quoted”" in lines[0]
    assert err.getvalue() == "cowork: session s\n"


def test_a_terminal_approval_spells_out_escape_sequences_and_shows_the_diff_line_by_line() -> None:
    from desktop.headless.approvals import _describe

    shown = _describe(
        {
            "title": "Run a command",
            "actionSummary": "Run: ls\x1b[2K\rrm -rf ~",
            "riskLevel": "high",
            "details": {
                "toolName": "WriteFile",
                "path": "/w/a.txt",
                "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new \u202e\n",
                "toolCallId": "call_7",
            },
        }
    )
    assert "call_7" not in shown  # an identifier that ties the request to its call, not a fact
    assert "\x1b" not in shown
    assert "\r" not in shown
    assert "Run: ls⟨U+001B⟩[2K⟨U+000D⟩rm -rf ~" in shown
    assert "     -old\n     +new ⟨U+202E⟩\n" in shown
    assert "diff:" not in shown
