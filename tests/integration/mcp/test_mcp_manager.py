"""The runtime's MCP client (``McpManager``) against the official SDK's server on loopback: which tools
are registered, what a call becomes, list_changed between steps, an unavailable server, elicitation,
the project's ``.cowork/mcp.json``, local servers under the policy.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.tool_runtime.mcp.integration import McpManager
from contracts._base import WireModel
from contracts.enums import ToolStatus
from contracts.events import EventType
from contracts.mcp import ElicitationAction, McpServerConfig
from contracts.mcp_boundary import ElicitationAsk, ElicitationReply, McpHooks, McpSetup
from contracts.tools import ToolRequest, ToolResult
from contracts.validation import validate_json_value
from tests.integration.mcp.servers import PNG, DocsLog, LoopbackServer, docs_server, stdio_server_command


@dataclass
class Hooks:
    """What the host would do: events collected, questions answered by a script, commands checked."""

    events: list[tuple[EventType, dict[str, Any], str | None]] = field(default_factory=list)
    answers: list[ElicitationReply] = field(default_factory=list)
    asked: list[ElicitationAsk] = field(default_factory=list)
    refuse_commands: str | None = None
    commands: list[tuple[list[str], str | None]] = field(default_factory=list)

    def emit(
        self,
        event_type: EventType,
        payload: Any = None,
        *,
        task_id: str | None = None,
        step_id: str | None = None,
    ) -> None:
        wire = payload.to_wire() if isinstance(payload, WireModel) else dict(payload or {})
        self.events.append((event_type, wire, task_id))

    async def elicit(self, ask: ElicitationAsk) -> ElicitationReply:
        self.asked.append(ask)
        return self.answers.pop(0) if self.answers else ElicitationReply(ElicitationAction.CANCEL)

    def check(self, command: Sequence[str], cwd: str | None) -> str | None:
        self.commands.append((list(command), cwd))
        return self.refuse_commands

    def of(self, event_type: EventType) -> list[dict[str, Any]]:
        return [payload for kind, payload, _ in self.events if kind is event_type]

    def states(self, name: str) -> list[str]:
        return [p["state"] for p in self.of(EventType.MCP_SERVER_STATE_CHANGED) if p["name"] == name]


@pytest.fixture
def docs() -> Iterator[tuple[LoopbackServer, DocsLog]]:
    server, log = docs_server()
    with LoopbackServer(server.streamable_http_app) as running:
        yield running, log


def http_server(url: str, name: str = "docs") -> McpServerConfig:
    return validate_json_value(McpServerConfig, {"name": name, "url": url, "allowInsecureLoopback": True})


def setup_for(
    hooks: Hooks,
    servers: Sequence[McpServerConfig] = (),
    *,
    allowed: Sequence[str] = ("docs/*",),
    workspace: Path | None = None,
    allow_local: bool = False,
    environ: dict[str, str] | None = None,
    backoff_s: float = 30.0,
    call_timeout_s: float = 120.0,
) -> McpSetup:
    return McpSetup(
        session_id="sess_mcp",
        servers=tuple(servers),
        allowed_tool_names=tuple(allowed),
        allow_local_servers=allow_local,
        workspace_paths=(str(workspace),) if workspace is not None else (),
        environ=environ if environ is not None else {"PATH": "/usr/bin:/bin"},
        hooks=McpHooks(emit=hooks.emit, elicit=hooks.elicit, check_local_command=hooks.check),
        call_timeout_s=call_timeout_s,
        extra={"backoff_s": backoff_s},
    )


@pytest.fixture
async def started() -> AsyncIterator[list[McpManager]]:
    managers: list[McpManager] = []
    yield managers
    for manager in managers:
        await manager.aclose()


async def start(managers: list[McpManager], setup: McpSetup) -> McpManager:
    manager = McpManager(setup)
    managers.append(manager)
    manager.start()
    await manager.wait_started(20)
    await manager.refresh()
    return manager


def request(tool: str, call_id: str = "call_1", **arguments: Any) -> ToolRequest:
    return ToolRequest(
        tool_name=tool,
        arguments=arguments,
        session_id="sess_mcp",
        task_id="task_1",
        step_id="step_1",
        tool_call_id=call_id,
    )


def names(manager: McpManager) -> set[str]:
    return {tool.tool_name for tool in manager.get_available_tools()}


def text(result: ToolResult) -> str:
    return result.output_text or ""


# ---------------------------------------------------------------------------------------- registration


async def test_only_allowlisted_tools_are_registered_and_the_rest_are_reported(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, _ = docs
    hooks = Hooks()
    manager = await start(
        started, setup_for(hooks, [http_server(server.url)], allowed=("docs/search", "docs/count"))
    )
    assert names(manager) == {"docs/search", "docs/count"}
    [state] = manager.states()
    assert state.state.value == "connected"
    assert state.tool_count == 2
    assert state.protocol_version
    left_out = {tool.tool_name: tool.reason for tool in state.rejected_tools or []}
    assert "secret" in left_out
    assert "delete_page" in left_out
    assert all("not allowed by the policy" in reason for reason in left_out.values())
    assert hooks.states("docs")[:2] == ["connecting", "connected"]

    # A tool that was not registered cannot be called, whatever the caller asks for.
    refused = await manager.execute(request("docs/secret"))
    assert refused.status is ToolStatus.FAILED
    assert refused.error is not None
    assert refused.error.code.value == "TOOL_NOT_FOUND"


async def test_a_server_whose_tools_no_pattern_names_is_never_contacted(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, log = docs
    hooks = Hooks()
    manager = await start(started, setup_for(hooks, [http_server(server.url)], allowed=("other/*",)))
    [state] = manager.states()
    assert state.state.value == "unavailable"
    assert "allows none of its tools" in (state.last_error or "")
    assert names(manager) == set()
    assert log.calls == []


async def test_a_call_reaches_the_server_and_comes_back_as_a_tool_result(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, log = docs
    hooks = Hooks()
    manager = await start(started, setup_for(hooks, [http_server(server.url)]))
    result = await manager.execute(request("docs/search", query="policies"))
    assert result.status is ToolStatus.SUCCEEDED, result
    assert text(result) == "found: policies"
    assert result.tool_call_id == "call_1"
    assert log.calls == ["search"]
    # Read-only by the server's word; a tool without annotations is taken to be destructive.
    assert manager.is_destructive("docs/search") is False
    assert manager.is_destructive("docs/delete_page") is True


async def test_schema_invalid_arguments_are_refused_before_the_server_is_called(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, log = docs
    manager = await start(started, setup_for(Hooks(), [http_server(server.url)]))
    for bad in ({"n": "three"}, {}, {"n": 2.5}):
        result = await manager.execute(request("docs/count", **bad))
        assert result.status is ToolStatus.FAILED, bad
        assert result.error is not None
        assert result.error.code.value == "INVALID_REQUEST"
        assert "nothing was sent to the server" in result.error.message
    assert log.calls == []
    ok = await manager.execute(request("docs/count", n=3))
    assert text(ok) == "1 2 3"
    assert log.calls == ["count"]


async def test_an_image_becomes_an_artifact_in_the_spool_and_progress_becomes_events(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, _ = docs
    hooks = Hooks()
    manager = await start(started, setup_for(hooks, [http_server(server.url)]))
    result = await manager.execute(request("docs/picture"))
    assert result.status is ToolStatus.SUCCEEDED
    assert "a picture" in text(result)
    assert "image/png" in text(result)
    [artifact] = result.artifacts
    assert artifact.content_type == "image/png"
    assert artifact.data_path is not None
    assert Path(artifact.data_path).read_bytes() == PNG
    manager.release_artifacts(result.artifacts)
    assert not Path(artifact.data_path).exists()

    await manager.execute(request("docs/progress", "call_p"))
    progress = hooks.of(EventType.MCP_PROGRESS)
    assert [(p["progress"], p.get("message")) for p in progress] == [(1.0, "halfway"), (2.0, "done")]
    assert all(p["serverName"] == "docs" and p["toolName"] == "progress" for p in progress)
    assert all(p["toolCallId"] == "call_p" for p in progress)


# ---------------------------------------------------------------------------------------- list_changed


async def test_list_changed_is_taken_between_steps_only(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, log = docs
    manager = await start(started, setup_for(Hooks(), [http_server(server.url)]))
    assert "docs/extra" not in names(manager)
    grown = await manager.execute(request("docs/grow"))
    assert text(grown) == "grown"
    # Mid-step: the new tool is announced but not registered, so not callable yet.
    await asyncio.sleep(0.2)
    assert "docs/extra" not in names(manager)
    assert (await manager.execute(request("docs/extra"))).status is ToolStatus.FAILED
    # Between steps it is.
    assert await manager.refresh() is True
    assert "docs/extra" in names(manager)
    assert text(await manager.execute(request("docs/extra"))) == "extra!"
    assert log.calls == ["grow", "extra"]
    assert await manager.refresh() is False  # nothing new


# ---------------------------------------------------------------------------------------- availability


async def test_an_unavailable_server_answers_clearly_and_is_tried_again_after_its_backoff(
    started: list[McpManager],
) -> None:
    app, _log = docs_server()
    server = LoopbackServer(app.streamable_http_app)
    server.start()
    try:
        hooks = Hooks()
        manager = await start(started, setup_for(hooks, [http_server(server.url)], backoff_s=0.5))
        assert text(await manager.execute(request("docs/search", query="a"))) == "found: a"
        server.stop()
        failures = [await manager.execute(request("docs/search", f"c{i}", query="b")) for i in range(3)]
        assert all(result.status is ToolStatus.FAILED for result in failures)
        assert manager.states()[0].state.value == "unavailable"
        # Marked unavailable: the next call answers at once, saying so, without waiting on the server.
        quick = await asyncio.wait_for(manager.execute(request("docs/search", "c4", query="b")), 2)
        assert quick.error is not None
        assert "unavailable" in quick.error.message
        assert "docs/search" in names(manager)  # its tools stay; they answer the error
        server.start()  # the same port: the server is back
        await asyncio.sleep(0.6)  # the backoff runs out
        back = await manager.execute(request("docs/search", "c5", query="again"))
        assert back.status is ToolStatus.SUCCEEDED, back
        assert text(back) == "found: again"
        assert manager.states()[0].state.value == "connected"
        assert "unavailable" in hooks.states("docs")
    finally:
        server.stop()


async def test_a_call_that_hangs_times_out_and_repeated_timeouts_mark_the_server_unavailable(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, log = docs
    manager = await start(started, setup_for(Hooks(), [http_server(server.url)], call_timeout_s=0.3))
    try:
        for index in range(3):
            result = await manager.execute(request("docs/hold", f"h{index}"))
            assert result.status is ToolStatus.FAILED
            assert result.error is not None
            assert result.error.code.value == "TOOL_EXECUTION_TIMEOUT"
            assert "did not answer tools/call within 0.3 s" in result.error.message
        assert manager.states()[0].state.value == "unavailable"
    finally:
        log.release.set()


async def test_a_server_that_cannot_be_reached_is_unavailable_and_others_still_work(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, _ = docs
    dead = LoopbackServer(docs_server()[0].streamable_http_app)  # never started: nothing listens
    hooks = Hooks()
    manager = await start(
        started,
        setup_for(
            hooks, [http_server(dead.url, "gone"), http_server(server.url)], allowed=("gone/*", "docs/*")
        ),
    )
    by_name = {state.name: state for state in manager.states()}
    assert by_name["gone"].state.value == "unavailable"
    assert by_name["gone"].last_error
    assert by_name["docs"].state.value == "connected"
    assert text(await manager.execute(request("docs/search", query="x"))) == "found: x"


async def test_plain_http_to_loopback_needs_the_explicit_opt_in(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, log = docs
    # The contract refuses an http:// entry without the opt-in; https:// to loopback is fine but
    # nothing answers TLS there.
    with pytest.raises(ValueError, match="allowInsecureLoopback"):
        validate_json_value(McpServerConfig, {"name": "docs", "url": server.url})
    remote = validate_json_value(
        McpServerConfig, {"name": "docs", "url": "http://example.com/mcp", "allowInsecureLoopback": True}
    )
    manager = await start(started, setup_for(Hooks(), [remote]))
    [state] = manager.states()
    assert state.state.value == "unavailable"
    assert "https://" in (state.last_error or "")
    assert log.calls == []


# ---------------------------------------------------------------------------------------- elicitation


async def test_a_servers_question_goes_to_the_host_with_the_call_it_belongs_to(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, _ = docs
    hooks = Hooks(answers=[ElicitationReply(ElicitationAction.ACCEPT, {"name": "Grace", "cups": 3})])
    manager = await start(started, setup_for(hooks, [http_server(server.url)]))
    result = await manager.execute(request("docs/ask_name", "call_ask"))
    assert text(result) == "hello Grace, 3 cups"
    [asked] = hooks.asked
    assert asked.server_name == "docs"
    assert asked.message == "What is your name?"
    assert asked.tool_call_id == "call_ask"
    assert asked.task_id == "task_1"
    assert asked.step_id == "step_1"
    assert asked.requested_schema["properties"]["name"]["default"] == "Ada"
    # The host checks what the user typed against the schema before sending it.
    assert asked.problems is not None
    assert asked.problems({"name": "x", "cups": 0})
    assert asked.problems({"name": "x", "cups": 2}) == []

    hooks.answers.append(ElicitationReply(ElicitationAction.DECLINE))
    declined = await manager.execute(request("docs/ask_name", "call_ask2"))
    assert text(declined) == "no name (decline)"


# ---------------------------------------------------------------------------------------- configuration


async def test_the_projects_mcp_json_adds_servers_and_a_malformed_one_is_a_warning(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager], tmp_path: Path
) -> None:
    server, _ = docs
    project = tmp_path / "project"
    (project / ".cowork").mkdir(parents=True)
    config = project / ".cowork" / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "servers": [
                    {"name": "docs", "url": server.url, "allowInsecureLoopback": True},
                    {"name": "broken", "url": "ftp://nowhere"},
                    {"name": "bad name!", "url": "https://example.com"},
                ]
            }
        )
    )
    hooks = Hooks()
    manager = await start(started, setup_for(hooks, workspace=project))
    assert [state.name for state in manager.states()] == ["docs"]
    assert manager.states()[0].source is not None
    assert manager.states()[0].source.value == "workspace"
    assert "docs/search" in names(manager)
    warnings = hooks.of(EventType.MCP_CONFIG_WARNING)
    assert len(warnings) == 2
    assert all(w["path"] == str(config) and w["source"] == "workspace" for w in warnings)
    assert "servers[1]" in warnings[0]["message"]
    assert "https://" in warnings[0]["message"]
    assert "servers[2].name" in warnings[1]["message"]

    config.write_text('{"servers": [ {"name": "docs", ')  # not JSON
    hooks = Hooks()
    manager = await start(started, setup_for(hooks, workspace=project))
    assert manager.states() == []
    [warning] = hooks.of(EventType.MCP_CONFIG_WARNING)
    assert "is not valid JSON" in warning["message"]
    assert "line 1" in warning["message"]


async def test_the_project_cannot_take_the_name_of_a_policy_server(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager], tmp_path: Path
) -> None:
    server, _ = docs
    project = tmp_path / "project"
    (project / ".cowork").mkdir(parents=True)
    (project / ".cowork" / "mcp.json").write_text(
        json.dumps({"servers": [{"name": "docs", "url": "https://attacker.example/mcp"}]})
    )
    hooks = Hooks()
    manager = await start(started, setup_for(hooks, [http_server(server.url)], workspace=project))
    [state] = manager.states()
    assert state.source is not None
    assert state.source.value == "policy"
    assert state.url == server.url
    [warning] = hooks.of(EventType.MCP_CONFIG_WARNING)
    assert "the policy already names a server docs" in warning["message"]


async def test_a_bearer_token_comes_from_the_environment_and_a_missing_one_is_reported(
    docs: tuple[LoopbackServer, DocsLog], started: list[McpManager]
) -> None:
    server, _ = docs
    config = validate_json_value(
        McpServerConfig,
        {
            "name": "docs",
            "url": server.url,
            "allowInsecureLoopback": True,
            "auth": {"type": "bearer", "tokenEnv": "DOCS_TOKEN"},
        },
    )
    manager = await start(started, setup_for(Hooks(), [config], environ={}))
    [state] = manager.states()
    assert state.state.value == "unavailable"
    assert "DOCS_TOKEN" in (state.last_error or "")
    assert "not set" in (state.last_error or "")

    manager = await start(started, setup_for(Hooks(), [config], environ={"DOCS_TOKEN": "t0k3n"}))
    assert text(await manager.execute(request("docs/search", query="q"))) == "found: q"


# ---------------------------------------------------------------------------------------- local servers


def stdio_config(log_path: Path, **extra: Any) -> McpServerConfig:
    return validate_json_value(
        McpServerConfig,
        {"name": "local", "transport": "stdio", "command": stdio_server_command(log_path), **extra},
    )


async def test_a_local_server_is_refused_unless_the_policy_allows_local_servers(
    started: list[McpManager], tmp_path: Path
) -> None:
    log_path = tmp_path / "local.log"
    hooks = Hooks()
    manager = await start(started, setup_for(hooks, [stdio_config(log_path)], allowed=("local/*",)))
    [state] = manager.states()
    assert state.state.value == "unavailable"
    assert "allowLocalMcpServers" in (state.last_error or "")
    assert not log_path.exists()  # never started
    assert hooks.commands == []


async def test_a_local_server_is_refused_by_the_command_policy(
    started: list[McpManager], tmp_path: Path
) -> None:
    log_path = tmp_path / "local.log"
    hooks = Hooks(refuse_commands="the command policy refuses it: Command is blocked: python3")
    manager = await start(
        started, setup_for(hooks, [stdio_config(log_path)], allowed=("local/*",), allow_local=True)
    )
    [state] = manager.states()
    assert state.state.value == "unavailable"
    assert "Command is blocked" in (state.last_error or "")
    assert hooks.commands
    assert hooks.commands[0][0][0] == sys.executable
    assert not log_path.exists()


async def test_an_allowed_local_server_runs_with_the_reduced_environment_and_stops_with_the_session(
    started: list[McpManager], tmp_path: Path
) -> None:
    import os

    log_path = tmp_path / "local.log"
    project = tmp_path / "project"
    project.mkdir()
    hooks = Hooks()
    environ = {**os.environ, "LLM_GATEWAY_AUTH_TOKEN": "must-not-leak", "COWORK_RPC_SECRET": "nor-this"}
    manager = await start(
        started,
        setup_for(
            hooks,
            [stdio_config(log_path, env={"DOCS_MARK": "marked"})],
            allowed=("local/search",),
            allow_local=True,
            workspace=project,
            environ=environ,
        ),
    )
    assert names(manager) == {"local/search"}
    assert text(await manager.execute(request("local/search", query="here"))) == "found: here"
    lines = log_path.read_text().splitlines()
    assert lines[0] == f"started marked secret=False cwd={project}"
    assert lines[1] == "search marked"
    assert hooks.commands[0][1] == str(project)
    await manager.aclose()
    assert manager.states()[0].state.value == "closed"


# ---------------------------------------------------------------------------------------- OAuth


async def test_an_oauth_servers_sign_in_goes_to_the_host_and_the_server_connects_after_it(
    started: list[McpManager],
) -> None:
    import keyring

    from tests.support.mcp_oauth_server import Browser, OAuthTestServer, RecordingKeyring

    previous = keyring.get_keyring()
    keychain = RecordingKeyring()
    keyring.set_keyring(keychain)
    browser = Browser()
    signing_in: list[asyncio.Future[None]] = []

    class SignsIn(Hooks):
        def emit(self, event_type: EventType, payload: Any = None, **ids: str | None) -> None:
            super().emit(event_type, payload, **ids)
            if event_type is EventType.MCP_AUTHORIZATION_REQUIRED:
                # The person opens the page in a browser; the authorization server approves.
                signing_in.append(asyncio.ensure_future(browser(payload.authorization_url)))

    app, _ = docs_server()
    try:
        with OAuthTestServer(inner_app=app.streamable_http_app()) as oauth:
            hooks = SignsIn()
            config = validate_json_value(
                McpServerConfig,
                {
                    "name": "docs",
                    "url": oauth.mcp_url,
                    "allowInsecureLoopback": True,
                    "auth": {"type": "oauth"},
                },
            )
            manager = await start(started, setup_for(hooks, [config]))
            for _ in range(400):
                if await manager.refresh():
                    break
                await asyncio.sleep(0.05)
            assert manager.states()[0].state.value == "connected", manager.states()
            assert (
                text(await manager.execute(request("docs/search", query="signed in"))) == "found: signed in"
            )
            [asked] = hooks.of(EventType.MCP_AUTHORIZATION_REQUIRED)
            assert asked["serverName"] == "docs"
            assert asked["authorizationUrl"].startswith(oauth.origin)
            assert browser.urls == [asked["authorizationUrl"]]
            assert hooks.states("docs")[:3] == ["connecting", "authorizing", "connected"]
            # The tokens went to the keychain, and nowhere near an event.
            assert any(call[0] == "set" for call in keychain.calls)
            issued = [value for kind, value in oauth.issued if kind in ("access", "refresh")]
            assert issued
            assert not any(token in json.dumps(hooks.events, default=str) for token in issued)
            await asyncio.gather(*signing_in)
    finally:
        keyring.set_keyring(previous)
