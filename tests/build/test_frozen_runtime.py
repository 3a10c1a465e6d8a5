"""The frozen runtime (PyInstaller onedir, linux-x86_64): what the bundle holds, and the program run
as the desktop and ``cowork exec`` run it — it connects, proves the secret, and completes a task with
real tools against the scripted gateway and the real local backend."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway, ScriptedGatewayThread
from contracts.images import MAX_PROMPT_CHARS
from contracts.ipc.handshake import SECRET_ENV
from contracts.ipc.listener import RuntimeListener
from cowork_release.bundle import inspect_bundle
from tests.headless.support import base_environment, run_cowork
from tests.headless.support import tool_call as exec_tool_call
from tests.integration.runtime.harness import Backend, Runtime, runtime_environment, tool_call, tool_results

pytestmark = pytest.mark.timeout(600)  # the first test of a session may build the bundle

# The conversation is long on purpose: with the tokenizer, each "hello " is one token; without it (a
# broken freeze silently falls back to an estimate), a third of its bytes. The runtime counts with
# that estimate until exact counts could matter — three times it reaching the 200k window — so the
# conversation grows, over three prompts each under MAX_PROMPT_CHARS, until the tokenizer must load.
WORDS = 16_000
PROMPTS = 3
HELLOS = "hello " * WORDS
PROMPT = "Copy the notes, then say hello. " + HELLOS
assert len(PROMPT) <= MAX_PROMPT_CHARS


def test_the_bundle_lists_every_file_and_holds_the_runtime_data_but_no_qt(bundle: Path) -> None:
    files = inspect_bundle(bundle).files
    assert files.platform == "linux-x86_64"
    assert files.executable == "agent-runtime"
    names = set(files.files)
    # tiktoken's offline encoding, the CA bundle for HTTPS, and the compiled halves of uvloop and RE2.
    assert "_internal/tiktoken_ext/data/cl100k_base.tiktoken" in names
    assert "_internal/certifi/cacert.pem" in names
    assert any(name.startswith("_internal/uvloop/loop.") for name in names)
    assert any(name.startswith("_internal/re2/_re2.") for name in names)
    packages = {name.split("/")[1] for name in names if name.startswith("_internal/") and name.count("/") > 1}
    unwanted = {
        "PySide6",
        "shiboken6",
        "qasync",
        "boto3",
        "botocore",
        "fastapi",
        "uvicorn",
        "backend",
        "desktop",
    }
    assert not packages & unwanted
    assert not [name for name in names if "libQt" in name]


async def test_the_frozen_runtime_connects_authenticates_and_completes_a_task(
    frozen_runtime: Path, backend: Backend, tmp_path: Path
) -> None:
    workspace = (tmp_path / "project").resolve()
    workspace.mkdir()
    (workspace / "notes.txt").write_text("frozen notes\n")
    script = [
        {
            "toolCalls": [
                tool_call("ReadFile", "c_read", path=str(workspace / "notes.txt")),
                tool_call("WriteFile", "c_write", path=str(workspace / "copy.txt"), content="frozen notes\n"),
            ]
        },
        {"toolCalls": [tool_call("RunCommand", "c_run", command="echo hello-from-$((40+2))")]},
        {"text": "Copied, and said hello."},
        *({"text": "Hello again."} for _ in range(PROMPTS - 1)),
    ]
    env = runtime_environment(backend, "", tmp_path / "runtime-data")
    async with ScriptedGateway(script) as gateway:
        env["LLM_GATEWAY_ENDPOINT"] = gateway.url
        rt = await Runtime.launch(env, label="frozen", program=[str(frozen_runtime)])
        try:
            await rt.create_session(backend, workspace)
            await rt.start_task(PROMPT, maxSteps=10)
            asked = await rt.event("approval_requested", timeout=30)  # RunCommand asks first
            await rt.approve(asked["payload"]["approvalId"])
            end = await rt.task_end("task_1", timeout=60)
            later = [
                await rt.run_task("Say hello again. " + HELLOS, task_id=f"task_{n}", timeout=60)
                for n in range(2, PROMPTS + 1)
            ]
            gateway.assert_done()
            await rt.shutdown()
            code = await rt.wait_exit(timeout=30)
        finally:
            await rt.aclose()
        requests = [request.body for request in gateway.requests]

    assert end["eventType"] == "task_completed", rt.output_text()
    assert [e["eventType"] for e in later] == ["task_completed"] * (PROMPTS - 1), rt.output_text()
    assert code == 0, rt.output_text()
    assert (workspace / "copy.txt").read_text() == "frozen notes\n"
    assert "frozen notes" in str(tool_results(requests[1])[0])
    assert "hello-from-42" in str(tool_results(requests[2])[0])
    assert rt.id_chain_problems() == []
    assert "Traceback" not in rt.output_text()
    # the last request carries the whole conversation: counted exactly, it is about one token a word
    estimated = rt.find("llm_request_started")[-1]["payload"]["estimatedInputTokens"]
    words = WORDS * PROMPTS
    assert words <= estimated < words * 2, f"{estimated} tokens: is the frozen tokenizer missing?"


async def test_a_frozen_runtime_without_the_secret_is_refused_and_exits(
    frozen_runtime: Path, backend: Backend, tmp_path: Path
) -> None:
    async with await RuntimeListener.open() as listener:
        env = runtime_environment(backend, "http://127.0.0.1:9", tmp_path / "data")
        env[SECRET_ENV] = "0" * 64  # not the desktop's secret
        process = await asyncio.create_subprocess_exec(
            str(frozen_runtime),
            "--connect",
            listener.name,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 3, output  # the handshake failed: the desktop cut it off
        assert listener.rejected == 1
        assert not listener.has_runtime


def test_cowork_exec_runs_a_task_on_the_frozen_runtime(
    frozen_runtime: Path, backend: Backend, tmp_path: Path
) -> None:
    workspace = (tmp_path / "project").resolve()
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the notes\n")
    # A wrapper that leaves a mark, so the test knows the frozen program is what ran.
    marker = tmp_path / "frozen-ran"
    wrapper = tmp_path / "agent-runtime"
    wrapper.write_text(f'#!/bin/sh\necho "$@" > {marker}\nexec {frozen_runtime} "$@"\n')
    wrapper.chmod(0o755)
    turns = [
        exec_tool_call("ReadFile", "c1", path=str(workspace / "notes.txt")),
        exec_tool_call("WriteFile", "c2", path=str(workspace / "out.txt"), content="written frozen\n"),
        exec_tool_call("RunCommand", "c3", command="echo from-the-command"),
        {"text": "Done, frozen.", "chunkSize": 5},
    ]
    env = base_environment(tmp_path, backend, COWORK_RUNTIME_EXECUTABLE=str(wrapper))
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        result = run_cowork(
            ["-C", str(workspace), "--endpoint", gateway.url, "--approve-all", "Do it"], env, timeout=120
        )
        gateway.assert_done()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done, frozen.\n"
    assert marker.read_text().split() == ["--stdio"]
    assert (workspace / "out.txt").read_text() == "written frozen\n"
    assert "Traceback" not in result.stderr
    assert os.access(frozen_runtime, os.X_OK)
