"""A session refused by a quota (seed 001 Phase 4): ``cowork exec`` says which limit and when to try
again, at once — the runtime does not retry a quota refusal as if the backend were busy."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.headless.support import base_environment, run_cowork, start_backend


def test_a_session_refused_by_the_sessions_per_user_quota_says_so_and_when_to_retry(
    tmp_path: Path, workspace: Path
) -> None:
    config = tmp_path / "config"
    (config / "quotas").mkdir(parents=True)
    (config / "quotas" / "local.toml").write_text("sessionsPerUser = 1\n")
    with start_backend(tmp_path / "backend", config_dir=config) as backend:
        body = {
            "clientInfo": {
                "desktopAppVersion": "1.0.0",
                "localAgentHostVersion": "1.0.0",
                "osFamily": "Linux",
            },
            "supportedCapabilities": ["File.Read"],
        }
        headers = {"Authorization": f"Bearer {backend.token}"}
        assert (
            httpx.post(f"{backend.url}/sessions", json=body, headers=headers, timeout=10).status_code == 201
        )
        env = base_environment(tmp_path, backend)
        with ScriptedGatewayThread({"turns": []}) as gateway:
            started = time.monotonic()
            result = run_cowork(["--endpoint", gateway.url, "hi"], env, cwd=workspace, timeout=60)
            took = time.monotonic() - started
            assert gateway.requests == []
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert result.returncode == 3, result.stderr
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("error: could not start a session: You already have 1 active sessions")
    assert "(sessionsPerUser = 1)" in errors[0]
    assert "try again in 8 h" in errors[0]
    assert "Traceback" not in result.stderr
    # No retries waiting out a Retry-After of hours (they would take the client's whole budget).
    assert took < 30
