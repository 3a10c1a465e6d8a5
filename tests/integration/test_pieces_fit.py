"""The pieces of one agent step fit together, each talking to the real thing over its real wire.

The local backend as the desktop starts it (``cowork-backend serve --store local``), its signed policy
bundle verified and loaded by the enforcer, the thread and the LLM client against the scripted
gateway, a tool call checked by the policy and run by the tool runtime, the outbound prompt redacted,
and the session's history uploaded and read back. This is the path the agent loop (seed 000 §4.1)
will drive; a shape that does not fit another part's fails here first.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.llm import GatewayConfig, LlmClient
from agent_runtime.agent_host.policy import Allowed, PolicyEnforcer, ToolCallFacts
from agent_runtime.agent_host.thread import ConversationThread, TiktokenTokenizer, TokenBudget
from agent_runtime.agent_host.thread.prompt import build_system_prompt
from agent_runtime.scripted_gateway import ScriptedGateway
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import TOOL_CAPABILITIES, ApprovalMode, OsFamily, ToolName, ToolStatus
from contracts.messages import SessionHistory
from contracts.rest.sessions import CreateSessionResponse
from contracts.signing import public_key_from_text, verify_bundle
from contracts.tools import ToolRequest, ToolScope
from tests.support.backend import Backend, start_backend

FAKE_AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture
def local_backend(tmp_path: Path) -> Iterator[Backend]:
    with start_backend(tmp_path / "backend-data") as running:
        yield running


async def test_one_step_runs_through_backend_policy_llm_tools_and_history(
    tmp_path: Path, local_backend: Backend
) -> None:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    notes = project / "notes.txt"
    notes.write_text(f"deploy with key {FAKE_AWS_KEY}\n")

    async with local_backend.http() as backend:
        # Session Service handshake (seed 000 §3.2 steps 2–6).
        created = await backend.post(
            "/sessions",
            json={
                "clientInfo": {
                    "desktopAppVersion": "0.1.0",
                    "localAgentHostVersion": "0.1.0",
                    "osFamily": "Linux",
                },
                "supportedCapabilities": ["File.Read", "File.Write", "LLM.Call", "Workspace.Upload"],
                "workspaceHint": {"localPaths": [str(project)]},
            },
        )
        assert created.status_code == 201, created.text
        session = CreateSessionResponse.model_validate_json(created.content)
        assert session.policy_bundle is not None
        assert session.session_id is not None
        assert session.workspace_id is not None
        keys = (await backend.get("/policy/keys")).json()["keys"]
        trusted = {key["keyId"]: public_key_from_text(key["publicKey"]) for key in keys}
        assert verify_bundle(session.policy_bundle, trusted)
        enforcer = PolicyEnforcer.load(
            session.policy_bundle.to_wire(),
            session_id=session.session_id,
            now=datetime.now(UTC),
            os_family=OsFamily.LINUX,
        )

        router = LocalToolRouter(workspace_root=project)
        tools = router.get_available_tools()
        thread = ConversationThread(
            session.session_id,
            TiktokenTokenizer(),
            budget=TokenBudget(session.policy_bundle.llm_policy.max_session_tokens),
        )
        system_prompt = build_system_prompt([str(project)], OsFamily.LINUX, tools)
        thread.add_user_message("What do my notes say?", task_id="task_1")

        script = [
            {
                "text": "Let me read them.",
                "toolCalls": [{"name": "ReadFile", "arguments": {"path": str(notes)}}],
            },
            {"text": "They describe a deployment."},
        ]
        async with ScriptedGateway(script) as gateway:
            llm = LlmClient(GatewayConfig(gateway.url, None, "anthropic", model="demo-model"))
            policy = session.policy_bundle.llm_policy

            async def step(step_id: str) -> Any:
                outbound, _ = enforcer.redactor.redact_messages(thread.messages)
                response = await llm.stream(
                    policy=policy, system_prompt=system_prompt, messages=outbound, tools=tools
                )
                thread.add_assistant_message(
                    response.text, task_id="task_1", step_id=step_id, tool_calls=response.tool_calls
                )
                thread.record_usage(response.usage.input_tokens, response.usage.output_tokens)
                return response

            first = await step("step_1")
            (call,) = first.tool_calls
            capability = TOOL_CAPABILITIES[ToolName(call.tool_name)]
            facts = ToolCallFacts(
                tool_name=call.tool_name,
                arguments=call.arguments,
                resolved_path=os.path.realpath(call.arguments["path"]),
                file_size=notes.stat().st_size,
                workspace_roots=(str(project),),
            )
            now = datetime.now(UTC)
            assert isinstance(
                enforcer.check(facts, capability, now=now, approval_mode=ApprovalMode.ON_RISKY_ACTIONS),
                Allowed,
            )
            result = await router.execute(
                ToolRequest(
                    tool_name=call.tool_name,
                    arguments=call.arguments,
                    session_id=session.session_id,
                    task_id="task_1",
                    step_id="step_1",
                    capability=capability,
                    tool_call_id=call.tool_call_id,
                    scope=ToolScope(workspace_root=str(project)),
                )
            )
            assert result.status is ToolStatus.SUCCEEDED
            thread.add_tool_result(result)
            second = await step("step_2")
            gateway.assert_done()
            sent_second = json.dumps(gateway.requests[1].body)
        await router.aclose()

        assert second.text == "They describe a deployment."
        assert FAKE_AWS_KEY in thread.messages[-2].content  # the thread keeps what the tool returned…
        assert FAKE_AWS_KEY not in sent_second  # …but the model never sees the secret (seed 000 §8.7)
        assert "deploy with key" in sent_second

        # The session's history after the task (seed 004 session_history), stored and read back.
        history = thread.to_session_history(
            workspace_id=session.workspace_id, snapshot_after_task_id="task_1"
        )
        content = json.dumps(history.to_wire()).encode()
        uploaded = await backend.post(
            f"/workspaces/{session.workspace_id}/artifacts",
            json={
                "workspaceId": session.workspace_id,
                "sessionId": session.session_id,
                "artifactType": "session_history",
                "artifactName": "session_history.json",
                "contentType": "application/json",
                "contentBase64": base64.b64encode(content).decode(),
            },
        )
        assert uploaded.status_code == 201, uploaded.text
        artifact_id = uploaded.json()["artifactId"]
        stored = await backend.get(f"/workspaces/{session.workspace_id}/artifacts/{artifact_id}/content")
        restored = SessionHistory.model_validate_json(stored.content)
        assert [m.role for m in restored.messages] == [m.role for m in thread.messages]
        continued = ConversationThread.from_session_history(
            restored,
            session_id="sess_next",
            tokenizer=TiktokenTokenizer(),
            budget=TokenBudget(policy.max_session_tokens),
        )
        assert [m.content for m in continued.messages] == [m.content for m in thread.messages]
