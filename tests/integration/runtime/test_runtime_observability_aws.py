"""The runtime's audit trail and telemetry on the AWS store: ``cowork-backend serve --store aws`` against
moto's server mode (DynamoDB and S3 on 127.0.0.1), the real runtime and a scripted task. Kept small:
moto takes a few hundred writes a second."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from moto.server import ThreadedMotoServer

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import Backend, Launch, eventually, tool_call
from tests.integration.runtime.test_runtime_observability import (
    admin_token,
    audit_events,
    fits_the_contract,
    types,
    verify_chain,
)
from tests.support.peers import REPO_ROOT

TENANT, USER = "acme", "alice"


@pytest.fixture(scope="module")
def aws_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Backend, dict[str, str]]]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    prefix = f"t{uuid.uuid4().hex[:10]}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "COWORK_"))},
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }
    data_dir = tmp_path_factory.mktemp("aws-backend")
    cli = [sys.executable, "-m", "backend.cli"]
    subprocess.run(
        [*cli, "aws-setup", "--env-prefix", prefix], cwd=REPO_ROOT, env=env, check=True, timeout=120
    )
    command = [*cli, "serve", "--store", "aws", "--env-prefix", prefix, "--data-dir", str(data_dir)]
    command += ["--port", "0", "--log-level", "warning"]
    try:
        with subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True) as process:
            try:
                assert process.stdout is not None
                ready = json.loads(process.stdout.readline())
                assert ready["event"] == "ready", ready
                token = subprocess.run(
                    [*cli, "token", "--data-dir", str(data_dir), "--tenant", TENANT, "--user", USER],
                    cwd=REPO_ROOT,
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=60,
                ).stdout.strip()
                keys = httpx.get(f"{ready['url']}/policy/keys", timeout=10).json()["keys"]
                yield Backend(ready["url"], token, TENANT, USER, keys, data_dir), {**env, "PREFIX": prefix}
            finally:
                process.terminate()
                process.wait(timeout=30)
    finally:
        moto.stop()


def aws_telemetry(env: dict[str, str], session_id: str) -> list[dict[str, Any]]:
    from backend.storage.aws import AwsSettings, open_aws_stores

    settings = AwsSettings(env_prefix=env["PREFIX"], endpoint_url=env["AWS_ENDPOINT_URL"], region="us-east-1")
    stores = open_aws_stores(settings)
    try:
        return [r.event for r in stores.telemetry.list(TENANT) if r.event["sessionId"] == session_id]
    finally:
        stores.close()


async def test_a_scripted_task_leaves_its_audit_trail_and_telemetry_on_the_aws_store(
    launch: Launch,
    aws_backend: tuple[Backend, dict[str, str]],
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend, env = aws_backend
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"):
        monkeypatch.setenv(name, env[name])
    token = admin_token(backend)
    (workspace / "a.txt").write_text("hello\n")
    script = [
        {"toolCalls": [tool_call("ReadFile", "c_read", path=str(workspace / "a.txt"))]},
        {"toolCalls": [tool_call("RunCommand", "c_run", command=f"echo ok > {workspace / 'ok.txt'}")]},
        {"text": "Done."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=backend)
        await rt.create_session(backend, workspace)
        await rt.start_task("Read, then run", maxSteps=5)
        asked = await rt.event("approval_requested", timeout=30)
        await rt.approve(asked["payload"]["approvalId"])
        end = await rt.task_end("task_1", timeout=60)
        assert end["eventType"] == "task_completed", end
        await rt.shutdown(timeout=60)
        assert await rt.wait_exit(timeout=60) == 0
    session_id = rt.session_id or ""

    async def trail() -> list[dict[str, Any]] | None:
        found = await audit_events(backend, token, session_id)
        return found if "session_completed" in types(found) else None

    audit = await eventually(trail, timeout=60, what="the audit trail on the AWS store")
    for envelope in audit:
        fits_the_contract(envelope)
    decisions = {
        e["payload"]["toolCallId"]: e["payload"]["decision"]
        for e in audit
        if e["eventType"] == "policy_decision"
    }
    assert decisions == {"c_read": "allowed", "c_run": "approval_required"}
    assert "approval_resolved" in types(audit)
    assert sorted(e["payload"]["toolCallId"] for e in audit if e["eventType"] == "tool_completed") == [
        "c_read",
        "c_run",
    ]
    assert (await verify_chain(backend, token))["ok"] is True

    async def measured() -> list[dict[str, Any]] | None:
        found = aws_telemetry(env, session_id)
        return found if len([e for e in found if e["eventType"] == "step_completed"]) == 3 else None

    telemetry = await eventually(measured, timeout=30, what="the telemetry on the AWS store")
    assert len([e for e in telemetry if e["eventType"] == "llm_request_completed"]) == 3
