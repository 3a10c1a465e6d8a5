"""The gateway as its own program: started with --port 0, read its URL, ask it, stop it by signal."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import ssl
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from agent_runtime.agent_host.llm import GatewayConfig, LlmClient
from agent_runtime.scripted_gateway import DEMO_LABEL
from contracts.policy import LlmPolicy
from tests.agent_runtime.agent_host.llm.support import user
from tests.conftest import REPO_ROOT

POLICY = LlmPolicy(
    allowed_models=["demo"], max_input_tokens=1000, max_output_tokens=100, max_session_tokens=10**6
)


@asynccontextmanager
async def gateway_process(
    *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agent_runtime.scripted_gateway",
        *args,
        "--port",
        "0",
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(30):
            line = (await process.stdout.readline()).decode().strip()
        assert line.startswith("Scripted LLM gateway"), line
        yield process, line.rsplit(" ", 1)[-1]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_the_cli_prints_its_url_answers_and_exits_cleanly_on_a_signal(
    tmp_path: Path, signum: int
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from the subprocess"}]))
    async with gateway_process("--script", str(script)) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        response = await LlmClient(GatewayConfig(url, None, "openai")).stream(
            policy=POLICY, system_prompt="", messages=[user("hi")], tools=[]
        )
        async with httpx.AsyncClient() as http:
            state = (await http.get(url + "/_scripted/state")).json()
        process.send_signal(signum)
        async with asyncio.timeout(15):
            code = await process.wait()
    assert response.text == "from the subprocess"
    assert state["turnsLeft"] == 0
    assert code == 0


async def test_the_demo_gateway_never_runs_out_and_labels_every_reply() -> None:
    async with gateway_process("--demo", "--chunk-delay-ms", "0") as (process, url):
        llm = LlmClient(GatewayConfig(url, None, "anthropic"))
        replies = [
            await llm.stream(policy=POLICY, system_prompt="", messages=[user(f"question {n}")], tools=[])
            for n in range(12)
        ]
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(15):
            assert await process.wait() == 0
    assert all(reply.text.startswith(DEMO_LABEL) for reply in replies)


async def test_a_bad_script_exits_with_status_2_and_says_which_field(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps([{"kind": "error", "status": 42}]))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agent_runtime.scripted_gateway",
        "--script",
        str(script),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(30):
        stdout, stderr = await process.communicate()
    assert process.returncode == 2
    assert stdout == b""
    assert b"turns[0].status" in stderr
    assert b"Traceback" not in stderr


def test_main_refuses_a_missing_source_and_an_out_of_range_port(capsys: pytest.CaptureFixture[str]) -> None:
    from agent_runtime.scripted_gateway.cli import main

    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2
    assert main(["--demo", "--port", "70000"]) == 2
    assert "--port" in capsys.readouterr().err


async def test_a_token_from_the_environment_is_required_of_every_request() -> None:
    async with gateway_process("--demo", env={"COWORK_SCRIPTED_GATEWAY_TOKEN": "env-token"}) as (
        process,
        url,
    ):
        async with httpx.AsyncClient() as http:
            anonymous = await http.get(url + "/_scripted/state")
            with_token = await http.get(
                url + "/_scripted/state", headers={"authorization": "Bearer env-token"}
            )
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(15):
            await process.wait()
    assert anonymous.status_code == 401
    assert with_token.status_code == 200


async def test_with_tls_the_cli_serves_https_with_the_certificate_it_writes_out(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "over TLS"}]))
    cert = tmp_path / "gateway.pem"
    async with gateway_process("--script", str(script), "--tls", "--tls-cert-out", str(cert)) as (_, url):
        assert url.startswith("https://127.0.0.1:")
        trusting = ssl.create_default_context(cafile=str(cert))
        llm = LlmClient(GatewayConfig(url, None, "anthropic"), tls=trusting, keep_alive_s=5)
        try:
            response = await llm.stream(policy=POLICY, system_prompt="", messages=[user("hi")], tools=[])
        finally:
            await llm.aclose()
        async with httpx.AsyncClient(verify=trusting) as http:
            (recorded,) = (await http.get(url + "/_scripted/requests")).json()["requests"]
        with pytest.raises(httpx.ConnectError):  # nobody else trusts it
            async with httpx.AsyncClient() as http:
                await http.get(url + "/_scripted/state")
    assert response.text == "over TLS"
    # What a benchmark of the client's time between two requests needs: when each arrived and ended.
    assert recorded["receivedAt"] <= recorded["completedAt"]
    assert isinstance(recorded["clientPort"], int)


async def test_tls_cert_out_without_tls_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text("[]")
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "agent_runtime.scripted_gateway", "--script", str(script)),
        *("--tls-cert-out", str(tmp_path / "x.pem")),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 2
    assert b"--tls-cert-out needs --tls" in stderr
