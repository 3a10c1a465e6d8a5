"""MCP servers through the real runtime process, driven by the scripted gateway (seed 003 §9): tools
under wire names, the policy's allowlist and denial, an approval rule naming one tool, list_changed
between steps, an unavailable server, elicitation answered with AnswerElicitation, the project's
configuration, local servers, GetMcpServers, and sessions closed at the end.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import psutil

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.approvals import ApprovalRequest
from tests.integration.mcp.conftest import CAPABILITIES, Docs, Org, write_mcp_json
from tests.integration.mcp.servers import free_port, stdio_server_command
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    Runtime,
    eventually,
    rpc_error,
    tool_call,
    tool_results,
    tool_uses,
)

WIRE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


async def open_mcp_session(launch: Launch, gateway_url: str, backend: Backend, workspace: Path) -> Runtime:
    rt = await launch(gateway_url, backend=backend)
    await rt.create_session(backend, workspace, supportedCapabilities=CAPABILITIES)
    return rt


def docs_entry(docs: Docs, name: str = "docs") -> dict[str, Any]:
    return {"name": name, "url": docs.server.url, "allowInsecureLoopback": True}


def offered(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in body.get("tools", [])]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content or "")


async def called(docs: Docs, name: str) -> bool:
    return name in docs.log.calls


async def servers(rt: Runtime) -> dict[str, dict[str, Any]]:
    answer = await rt.call("GetMcpServers", {"sessionId": rt.session_id})
    return {server["name"]: server for server in answer["servers"]}


async def test_mcp_tools_reach_the_model_under_wire_names_and_their_calls_run(
    launch: Launch, mcp_backend: Backend, workspace: Path, docs: Docs, org: Org
) -> None:
    write_mcp_json(workspace, docs_entry(docs))
    script = [
        {
            "toolCalls": [
                tool_call("docs__search", "c1", query="policies"),
                tool_call("org__count", "c2", n=3),
            ]
        },
        {"text": "Found it and counted."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_mcp_session(launch, gateway.url, mcp_backend, workspace)
        end = await rt.run_task("Search and count")
        first, second = gateway.requests[0].body, gateway.requests[1].body
        listed = await servers(rt)
        await rt.shutdown()
        await rt.wait_exit()
    assert end["eventType"] == "task_completed", end
    names = offered(first)
    assert {"docs__search", "docs__count", "org__search", "org__count", "org__secret"} <= set(names)
    assert "docs__secret" not in names  # the project's server: only its allowlisted tools
    assert all(WIRE_NAME.fullmatch(name) for name in names), names
    # The tools' descriptions are the servers' words: in the tool list, not in the system prompt.
    assert "Search the documentation." not in json.dumps(first.get("system", ""))
    results = {block["tool_use_id"]: result_text(block) for block in tool_results(second)}
    assert results == {"c1": "found: policies", "c2": "1 2 3"}
    assert [use["name"] for use in tool_uses(second)] == ["docs__search", "org__count"]
    assert docs.log.calls == ["search"]
    assert "count" in org.log.calls

    requested = {e["payload"]["toolCallId"]: e["payload"] for e in rt.find("tool_requested")}
    assert requested["c1"]["toolName"] == "docs/search"
    assert requested["c1"]["capability"] == "Mcp.Invoke"
    assert requested["c2"]["toolName"] == "org/count"
    completed = {e["payload"]["toolCallId"]: e["payload"]["status"] for e in rt.find("tool_completed")}
    assert completed == {"c1": "succeeded", "c2": "succeeded"}

    assert listed["docs"]["state"] == "connected"
    assert listed["docs"]["source"] == "workspace"
    assert listed["docs"]["toolCount"] == 7  # the allowlisted tools it offers
    assert "secret" in {tool["toolName"] for tool in listed["docs"]["rejectedTools"]}
    assert listed["org"]["source"] == "policy"
    assert listed["org"]["protocolVersion"]
    states = {(e["payload"]["name"], e["payload"]["state"]) for e in rt.find("mcp_server_state_changed")}
    assert {("docs", "connected"), ("org", "connected"), ("docs", "closed")} <= states
    # The session's end closes the server's session (DELETE, seed 003 §9.2 step 5).
    assert "DELETE" in docs.log.http


async def test_a_tool_the_policy_does_not_allow_is_never_offered_and_a_call_of_it_is_denied(
    launch: Launch, mcp_backend: Backend, workspace: Path, docs: Docs
) -> None:
    write_mcp_json(workspace, docs_entry(docs))
    script = [{"toolCalls": [tool_call("docs__secret", "s1")]}, {"text": "Not allowed, then."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_mcp_session(launch, gateway.url, mcp_backend, workspace)
        end = await rt.run_task("Read the secret", approvalMode="never")
        first = gateway.requests[0].body
        [result] = tool_results(gateway.requests[1].body)
    assert end["eventType"] == "task_completed", end
    assert "docs__secret" not in offered(first)
    [completed] = rt.find("tool_completed")
    assert completed["payload"]["status"] == "denied"
    assert completed["payload"]["toolName"] == "docs/secret"
    assert completed["payload"]["error"]["code"] == "CAPABILITY_DENIED"
    assert "MCP tool not allowed by the policy: docs/secret" in completed["payload"]["error"]["message"]
    assert result.get("is_error") is True
    assert docs.log.calls == []


async def test_an_approval_rule_naming_a_tool_asks_with_server_tool_and_arguments_in_every_mode(
    launch: Launch, mcp_backend: Backend, workspace: Path, docs: Docs
) -> None:
    write_mcp_json(workspace, docs_entry(docs))
    script = [
        {"toolCalls": [tool_call("docs__delete_page", "d1", page="old")]},
        {"toolCalls": [tool_call("docs__delete_page", "d2", page="keep")]},
        {"text": "Deleted one, kept the other."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_mcp_session(launch, gateway.url, mcp_backend, workspace)
        await rt.start_task("Delete two pages", approvalMode="never")
        first = await rt.event("approval_requested")
        assert docs.log.calls == []  # nothing reaches the server before the user says yes
        await rt.approve(first["payload"]["approvalId"])
        second = await rt.event("approval_requested", count=2)
        await rt.approve(second["payload"]["approvalId"], "denied", reason="keep that one")
        end = await rt.task_end("task_1")
        results = {b["tool_use_id"]: b for b in tool_results(gateway.requests[1].body)}
        denied = {b["tool_use_id"]: b for b in tool_results(gateway.requests[2].body)}
    assert end["eventType"] == "task_completed", end
    request = first["payload"]
    ApprovalRequest.model_validate_json(json.dumps(request))
    assert request["title"] == "Delete a documentation page"
    assert request["description"] == "The page is removed for every reader."
    assert request["riskLevel"] == "high"
    assert request["details"]["toolName"] == "docs/delete_page"
    assert request["details"]["mcpServer"] == "docs"
    assert request["details"]["mcpTool"] == "delete_page"
    assert request["details"]["arguments"] == {"page": "old"}
    assert "delete_page" in request["actionSummary"]
    # The bundle asked: no "always allow in this project" for it.
    assert "suggestedRules" not in request
    assert second["payload"]["details"]["arguments"] == {"page": "keep"}
    assert docs.log.calls == ["delete_page"]
    assert result_text(results["d1"]) == "deleted old"
    assert denied["d2"].get("is_error") is True
    assert "keep that one" in result_text(denied["d2"])


async def test_a_tool_the_server_adds_is_offered_from_the_next_step_on(
    launch: Launch, mcp_backend: Backend, workspace: Path, docs: Docs
) -> None:
    write_mcp_json(workspace, docs_entry(docs))
    script = [
        {"toolCalls": [tool_call("docs__grow", "g1")]},
        {"toolCalls": [tool_call("docs__extra", "e1")]},
        {"text": "Used the new tool."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_mcp_session(launch, gateway.url, mcp_backend, workspace)
        end = await rt.run_task("Grow and use")
        bodies = [request.body for request in gateway.requests]
    assert end["eventType"] == "task_completed", end
    assert "docs__extra" not in offered(bodies[0])
    assert "docs__extra" in offered(bodies[1])
    [extra] = tool_results(bodies[2])
    assert result_text(extra) == "extra!"
    assert docs.log.calls == ["grow", "extra"]


async def test_an_unavailable_server_fails_its_calls_clearly_and_the_task_goes_on(
    launch: Launch, mcp_backend: Backend, workspace: Path
) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/mcp"
    write_mcp_json(workspace, {"name": "docs", "url": nowhere, "allowInsecureLoopback": True})
    (workspace / "notes.txt").write_text("local notes")
    script = [
        {
            "toolCalls": [
                tool_call("docs__search", "s1", query="x"),
                tool_call("ReadFile", "r1", path=str(workspace / "notes.txt")),
            ]
        },
        {"text": "The docs server is down; I read the notes instead."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_mcp_session(launch, gateway.url, mcp_backend, workspace)
        end = await rt.run_task("Search, or read the notes")
        results = {b["tool_use_id"]: b for b in tool_results(gateway.requests[1].body)}
        listed = await servers(rt)
    assert end["eventType"] == "task_completed", end
    assert results["s1"].get("is_error") is True
    assert "unavailable" in result_text(results["s1"])
    assert result_text(results["r1"]).endswith("local notes")
    assert listed["docs"]["state"] == "unavailable"
    assert listed["docs"]["lastError"]
    [state] = [e for e in rt.find("mcp_server_state_changed") if e["payload"]["state"] == "unavailable"]
    assert state["payload"]["name"] == "docs"


async def test_a_servers_question_is_answered_with_answer_elicitation(
    launch: Launch, mcp_backend: Backend, workspace: Path, docs: Docs
) -> None:
    write_mcp_json(workspace, docs_entry(docs))
    script = [{"toolCalls": [tool_call("docs__ask_name", "a1")]}, {"text": "Greeted."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_mcp_session(launch, gateway.url, mcp_backend, workspace)
        await rt.start_task("Ask my name")
        asked = (await rt.event("elicitation_requested"))["payload"]
        params = {"sessionId": rt.session_id, "elicitationId": asked["elicitationId"]}
        try:
            await rt.call("AnswerElicitation", {**params, "action": "accept", "content": {"cups": 0}})
        except Exception as exc:
            refused = rpc_error(exc)
        else:
            raise AssertionError("an answer that does not fit the schema was accepted")
        answer = {"name": "Grace", "cups": 3}
        accepted = await rt.call("AnswerElicitation", {**params, "action": "accept", "content": answer})
        again = await rt.call("AnswerElicitation", {**params, "action": "decline"})
        end = await rt.task_end("task_1")
        [result] = tool_results(gateway.requests[1].body)
    assert end["eventType"] == "task_completed", end
    assert asked["serverName"] == "docs"
    assert asked["toolName"] == "ask_name"
    assert asked["message"] == "What is your name?"
    assert asked["requestedSchema"]["properties"]["cups"]["default"] == 2
    assert asked["timeoutSeconds"] >= 1
    assert refused.rpc_code == -32602
    assert "content" in refused.rpc_message
    assert accepted == {"accepted": True}
    assert again == {"accepted": False}
    assert result_text(result) == "hello Grace, 3 cups"
    [resolved] = rt.find("elicitation_resolved")
    assert resolved["payload"] == {
        "elicitationId": asked["elicitationId"],
        "action": "accept",
        "timedOut": False,
    }
    assert resolved["taskId"] == "task_1"


async def test_a_malformed_mcp_json_is_a_warning_and_the_session_works_without_it(
    launch: Launch, mcp_backend: Backend, workspace: Path
) -> None:
    config = workspace / ".cowork" / "mcp.json"
    config.parent.mkdir()
    config.write_text('{"servers": [{"name": "docs", "url": ')
    async with ScriptedGateway([{"text": "Hello."}]) as gateway:
        rt = await open_mcp_session(launch, gateway.url, mcp_backend, workspace)
        end = await rt.run_task("Say hello")
        listed = await servers(rt)
    assert end["eventType"] == "task_completed", end
    [warning] = rt.find("mcp_config_warning")
    assert warning["payload"]["path"] == str(config)
    assert "is not valid JSON" in warning["payload"]["message"]
    assert set(listed) == {"org"}  # the bundle's server is not affected


async def test_a_local_server_runs_under_the_command_policy_and_stops_with_the_session(
    launch: Launch, mcp_backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    log_path = tmp_path / "local.log"
    command = stdio_server_command(log_path)
    write_mcp_json(
        workspace,
        {"name": "local", "transport": "stdio", "command": command, "env": {"DOCS_MARK": "m"}},
        {"name": "sudoer", "transport": "stdio", "command": ["sudo", *command]},
    )
    script = [{"toolCalls": [tool_call("local__search", "l1", query="here")]}, {"text": "Done."}]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, extra={"LLM_GATEWAY_AUTH_TOKEN": "never-for-servers"})
        await rt.create_session(mcp_backend, workspace, supportedCapabilities=CAPABILITIES)
        end = await rt.run_task("Search locally")
        [result] = tool_results(gateway.requests[1].body)
        listed = await servers(rt)
        children = [
            p
            for p in psutil.Process(rt.process.pid).children(recursive=True)
            if "stdio_docs.py" in " ".join(p.cmdline())
        ]
        await rt.shutdown()
        await rt.wait_exit()
    assert end["eventType"] == "task_completed", end
    assert result_text(result) == "found: here"
    assert listed["local"]["state"] == "connected"
    assert listed["sudoer"]["state"] == "unavailable"
    assert "Command is blocked: sudo" in listed["sudoer"]["lastError"]
    lines = log_path.read_text().splitlines()
    assert lines[0] == f"started m secret=False cwd={workspace}"
    assert "search m" in lines
    assert children, "the local server ran as the runtime's child"
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, "the local server outlived its session"


async def test_an_mcp_call_in_a_checkpoint_resumes_like_a_built_in_one(
    launch: Launch, mcp_backend: Backend, workspace: Path, docs: Docs, data_dir: Path
) -> None:
    write_mcp_json(workspace, docs_entry(docs))
    script = [{"toolCalls": [tool_call("docs__hold", "h1")]}, {"text": "Resumed after the crash."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_mcp_session(launch, gateway.url, mcp_backend, workspace)
        await rt.start_task("Hold on")
        await eventually(lambda: called(docs, "hold"), timeout=15, what="the hold call at the server")
        session_id = rt.session_id
        assert session_id is not None
        await rt.kill()  # a crash while the MCP call runs
        docs.log.release.set()
        second = await launch(gateway.url, label="resumed")
        second.session_id = session_id
        resumed = await second.resume(session_id)
        end = await second.task_end("task_1")
        body = gateway.requests[1].body
    assert resumed["sessionId"] == session_id
    assert end["eventType"] == "task_completed", end
    # The call the crash interrupted is answered "interrupted" under its wire name, as a built-in's is.
    [use] = [u for u in tool_uses(body) if u["id"] == "h1"]
    assert use["name"] == "docs__hold"
    [result] = tool_results(body)
    assert result["tool_use_id"] == "h1"
    assert result.get("is_error") is True
    assert "Interrupted" in result_text(result)
    assert "docs__hold" in offered(body)
    assert all(WIRE_NAME.fullmatch(name) for name in offered(body))
