"""Every redirect hop of HttpRequest passes the policy and the approval rule the first URL passed
(seed 000 §8.2, §10; seed 003 §4.5, §8.3).

One step's tool calls go through the loop's real path (``run_tool_calls``): the real policy enforcer on
a bundle sent as JSON, the real approval gate answered the way the desktop answers it (``decide``), the
real dispatch and tool runtime, and a real HTTP server on loopback. Two names stand for two hosts: the
test resolver sends both to the local server, which sees which one was asked for in ``Host``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import pytest

from agent_runtime.agent_host.approval import ApprovalGate
from agent_runtime.agent_host.events import EventEmitter
from agent_runtime.agent_host.loop import LoopContext, TaskRecord
from agent_runtime.agent_host.loop.tool_calls import run_tool_calls
from agent_runtime.agent_host.policy import PolicyEnforcer, PolicyExpired
from agent_runtime.agent_host.routing import ToolDispatch
from agent_runtime.agent_host.session_runtime.machine import SessionMachine
from agent_runtime.agent_host.session_runtime.runtime import SessionRuntime, Transcript
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.approvals import ApprovalRequest
from contracts.enums import ApprovalDecision, ApprovalMode, OsFamily, SessionStatus, TaskStatus, ToolStatus
from contracts.errors import ErrorCode
from contracts.methods import ApproveActionParams
from contracts.tools import ToolCall, ToolResult
from tests.agent_runtime.agent_host.policy.bundles import EXPIRES, NOW, bundle_json
from tests.agent_runtime.tool_runtime.support import FakeResolver, LocalHTTPServer

SESSION = "sess_1"
WAIT_S = 10.0


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as running:
        yield running


@dataclass
class Desktop:
    """Answers approval requests in order from a script, as the user would; records what it saw.

    An answer given as ``(decision, seconds)`` comes that long after the request, as a user's does."""

    answers: list[ApprovalDecision | tuple[ApprovalDecision, float]]
    seen: list[ApprovalRequest] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def notify(self, method: str, params: Any) -> None:
        if params.get("eventType") == "approval_requested":
            self.arrived.set()


@dataclass
class Step:
    """A session reduced to what one step of tool calls uses."""

    ctx: LoopContext
    gate: ApprovalGate
    desktop: Desktop
    task: TaskRecord
    expired: PolicyExpired | None = None

    async def run(self, *, clock: Callable[[], datetime] = lambda: NOW, **arguments: Any) -> ToolResult:
        call = ToolCall(tool_call_id="call-1", tool_name="HttpRequest", arguments=arguments)

        async def answer() -> None:
            while self.desktop.answers:
                async with asyncio.timeout(WAIT_S):
                    while not self.gate.pending:
                        self.desktop.arrived.clear()
                        await self.desktop.arrived.wait()
                request = self.gate.pending[0]
                self.desktop.seen.append(request)
                answer = self.desktop.answers.pop(0)
                decision, delay = answer if isinstance(answer, tuple) else (answer, 0.0)
                await asyncio.sleep(delay)  # the user reading the dialog, not a synchronisation
                self.gate.decide(
                    ApproveActionParams(
                        session_id=SESSION, approval_id=request.approval_id, decision=decision
                    )
                )

        answering = asyncio.create_task(answer())
        try:
            async with asyncio.timeout(WAIT_S):
                step = await run_tool_calls(self.ctx, self.task, "step-1", [call], now=clock)
            await asyncio.wait_for(answering, WAIT_S)
        finally:
            answering.cancel()
        self.expired = step.policy_expired
        (result,) = step.results
        return result


@pytest.fixture
async def make_step(tmp_path: Path) -> AsyncIterator[Any]:
    opened: list[tuple[ToolDispatch, EventEmitter, ApprovalGate]] = []

    async def make(
        grant: dict[str, Any],
        *,
        approval_mode: ApprovalMode = ApprovalMode.ON_RISKY_ACTIONS,
        answers: list[ApprovalDecision | tuple[ApprovalDecision, float]] | None = None,
    ) -> Step:
        workspace = tmp_path / "workspace"
        workspace.mkdir(exist_ok=True)
        resolver = FakeResolver({"allowed.test": [["127.0.0.1"]], "other.test": [["127.0.0.1"]]})
        router = LocalToolRouter(
            workspace_root=workspace,
            spool_dir=tmp_path / "spool",
            allow_loopback_http=True,
            resolver=resolver,
        )
        dispatch = ToolDispatch(router, workspace_roots=[str(workspace)], uploader=None)
        desktop = Desktop(answers=list(answers or []))
        emitter = EventEmitter(workspace_id="ws_1", session_id=SESSION, notify=desktop.notify, log_path=None)
        gate = ApprovalGate(session_id=SESSION, emit=emitter.emit, persist=None, timeout_s=WAIT_S)
        opened.append((dispatch, emitter, gate))
        enforcer = PolicyEnforcer.load(
            bundle_json({"name": "Network.Http", **grant}),
            session_id=SESSION,
            now=NOW,
            os_family=OsFamily.LINUX,
        )
        runtime = SessionRuntime(
            session_id=SESSION,
            workspace_id="ws_1",
            tenant_id="tenant_1",
            user_id="user_1",
            workspace_paths=(str(workspace),),
            machine=SessionMachine(SessionStatus.SESSION_RUNNING, TaskStatus.CHECKING_POLICY),
            # A step of tool calls reads no conversation, calls no LLM and writes no checkpoint.
            transcript=Transcript(cast(Any, None)),
        )
        ctx = LoopContext(
            runtime=runtime,
            os_family=OsFamily.LINUX,
            enforcer=enforcer,
            llm=cast(Any, None),
            model="model-a",
            dispatch=dispatch,
            approvals=gate,
            emitter=emitter,
            store=cast(Any, None),
            uploader=None,
        )
        task = TaskRecord(task_id="task-1", prompt="fetch", max_steps=10, approval_mode=approval_mode)
        return Step(ctx, gate, desktop, task)

    yield make
    for dispatch, emitter, gate in opened:
        await gate.aclose()
        await dispatch.aclose()
        await emitter.aclose()


def hosts(server: LocalHTTPServer) -> list[str]:
    return [request["headers"]["Host"].split(":")[0] for request in server.requests]


async def test_a_redirect_to_a_domain_not_in_the_allowlist_is_denied_and_never_fetched(
    make_step: Any, server: LocalHTTPServer
) -> None:
    step = await make_step({"allowedDomains": ["allowed.test"]})
    elsewhere = server.url("/hello", host="other.test")
    result = await step.run(url=server.url(f"/to?location={quote(elsewhere, safe='')}", host="allowed.test"))
    assert result.status is ToolStatus.DENIED
    assert result.error is not None
    assert result.error.code is ErrorCode.CAPABILITY_DENIED
    assert elsewhere in result.error.message  # which URL
    assert "Domain not allowed: other.test" in result.error.message  # and why
    assert hosts(server) == ["allowed.test"]  # the open redirect led nowhere


async def test_a_redirect_chain_within_the_allowlist_is_followed_and_names_the_final_url(
    make_step: Any, server: LocalHTTPServer
) -> None:
    step = await make_step({"allowedDomains": ["allowed.test", "other.test"]})
    final = server.url("/chain/0", host="other.test")
    second = server.url(f"/to?code=307&location={quote(final, safe='')}", host="allowed.test")
    result = await step.run(
        url=server.url(f"/to?code=301&location={quote(second, safe='')}", host="allowed.test")
    )
    assert result.status is ToolStatus.SUCCEEDED, result.error
    assert result.output_text is not None
    assert result.output_text.startswith(f"HTTP 200 OK\nFinal URL: {final} (after 2 redirects)\n")
    assert hosts(server) == ["allowed.test", "allowed.test", "other.test"]


async def test_a_hop_that_needs_approval_asks_the_user_and_a_denial_stops_it(
    make_step: Any, server: LocalHTTPServer
) -> None:
    # No allowlist: every request is high risk and asks (seed 000 §8.5) — the first URL and the hop to
    # another host alike; a "once" approval of the first host does not cover the second.
    step = await make_step({}, answers=[ApprovalDecision.APPROVED, ApprovalDecision.DENIED])
    elsewhere = server.url("/hello", host="other.test")
    result = await step.run(
        url=server.url(f"/to?code=307&location={quote(elsewhere, safe='')}", host="allowed.test"),
        method="POST",
        body="data",
    )
    first, hop = step.desktop.seen
    assert first.details.url == server.url(
        f"/to?code=307&location={quote(elsewhere, safe='')}", host="allowed.test"
    )
    assert (hop.details.url, hop.details.method) == (elsewhere, "POST")
    assert hop.action_summary == f"POST {elsewhere}"
    assert result.status is ToolStatus.DENIED
    assert result.error is not None
    assert result.error.code is ErrorCode.APPROVAL_DENIED
    assert elsewhere in result.error.message
    assert hosts(server) == ["allowed.test"]


async def test_an_approved_hop_is_followed(make_step: Any, server: LocalHTTPServer) -> None:
    step = await make_step({}, answers=[ApprovalDecision.APPROVED, ApprovalDecision.APPROVED])
    elsewhere = server.url("/hello", host="other.test")
    result = await step.run(url=server.url(f"/to?location={quote(elsewhere, safe='')}", host="allowed.test"))
    assert result.status is ToolStatus.SUCCEEDED, result.error
    assert len(step.desktop.seen) == 2
    assert hosts(server) == ["allowed.test", "other.test"]


async def test_the_time_a_hop_waits_for_its_approval_does_not_count_against_the_timeout(
    make_step: Any, server: LocalHTTPServer
) -> None:
    step = await make_step({}, answers=[ApprovalDecision.APPROVED, (ApprovalDecision.APPROVED, 1.5)])
    elsewhere = server.url("/hello", host="other.test")
    url = server.url(f"/to?location={quote(elsewhere, safe='')}", host="allowed.test")
    result = await step.run(url=url, timeout=1)
    assert result.status is ToolStatus.SUCCEEDED, result.error
    assert hosts(server) == ["allowed.test", "other.test"]


async def test_a_hop_to_the_host_the_user_just_approved_does_not_ask_again(
    make_step: Any, server: LocalHTTPServer
) -> None:
    step = await make_step({}, answers=[ApprovalDecision.APPROVED])
    result = await step.run(url=server.url("/chain/2", host="allowed.test"))
    assert result.status is ToolStatus.SUCCEEDED, result.error
    assert len(step.desktop.seen) == 1
    assert hosts(server) == ["allowed.test"] * 3


async def test_a_hop_after_the_bundle_expired_is_refused_and_the_session_pauses(
    make_step: Any, server: LocalHTTPServer
) -> None:
    step = await make_step({"allowedDomains": ["allowed.test"]})

    def clock() -> datetime:
        # The bundle lapses while the first response is on its way: the hop is checked after it.
        return EXPIRES + timedelta(seconds=1) if server.requests else NOW

    result = await step.run(url=server.url("/chain/1", host="allowed.test"), clock=clock)
    assert result.status is ToolStatus.DENIED
    assert result.error is not None
    assert result.error.code is ErrorCode.POLICY_EXPIRED
    assert step.expired is not None
    assert len(server.requests) == 1


async def test_a_hop_whose_location_has_an_ambiguous_authority_is_refused(
    make_step: Any, server: LocalHTTPServer
) -> None:
    step = await make_step({"allowedDomains": ["allowed.test", "other.test"]})
    # httpx reads host other.test here; a browser reads 127.0.0.1. Neither reading is followed.
    location = f"http://127.0.0.1\\@other.test:{server.port}/hello"
    result = await step.run(url=server.url(f"/to?location={quote(location, safe='')}", host="allowed.test"))
    assert result.status is not ToolStatus.SUCCEEDED
    assert result.error is not None
    assert "backslash" in result.error.message
    assert hosts(server) == ["allowed.test"]
