"""What the user sees when the LLM gateway fails, and what fixing it in Settings does, with real
runtime processes: the pause banner names the gateway's URL and what went wrong once (a refused
connection, a name that does not resolve, an HTTP status) and offers Settings beside Resume; a
conversation paused on a gateway that cannot be reached, resumed after Settings name another, calls
the new one — its runtime, which reads the gateway once, is restarted on the current settings."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.approval.queue import ApprovalQueue
from desktop.conversation.banners import BannerAction
from desktop.conversation.items import AssistantMessage, Notice
from desktop.conversation.session import ConversationSession
from desktop.conversation.state import ConversationState
from desktop.launch.runtime import runtime_command
from desktop.supervision.runtime import QtRuntimeLauncher
from tests.desktop.supervision.live import StateWaiter, identity, runtime_env
from tests.desktop.support import Run
from tests.support.backend import Backend


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Settings:
    """What Settings name now: the environment each runtime launch reads afresh, as the app's does."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)

    def use_gateway(self, url: str) -> None:
        self.env["LLM_GATEWAY_ENDPOINT"] = url

    def launcher(self, log_dir: Path) -> QtRuntimeLauncher:
        async def environment() -> Mapping[str, str]:
            return dict(self.env)

        return QtRuntimeLauncher(
            command=lambda: runtime_command(self.env), environment=environment, log_dir=log_dir
        )


def conversation(
    backend: Backend, url: str, tmp_path: Path, workspace: Path
) -> tuple[ConversationSession, StateWaiter, Settings]:
    settings = Settings(runtime_env(backend, url, tmp_path / "runtime-data"))
    state = ConversationState()
    session = ConversationSession(
        state=state,
        launcher=settings.launcher(tmp_path / "logs"),
        identity=identity(backend),
        folder=str(workspace),
        approvals=ApprovalQueue(),
    )
    return session, StateWaiter(state), settings


def test_resume_after_settings_name_another_gateway_calls_the_new_one(
    run: Run[None], backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    unreachable = f"http://127.0.0.1:{closed_port()}"

    async def scenario() -> None:
        session, waiter, settings = conversation(backend, unreachable, tmp_path, workspace)
        try:
            await session.send("Say hello")
            await waiter.until(lambda: session.state.status.session == "SESSION_PAUSED", what="the pause")
            with ScriptedGatewayThread({"turns": [{"text": "Hello from the new gateway."}]}) as fixed:
                settings.use_gateway(fixed.url)  # the user corrects Settings
                first = session.runtime_pid
                await session.resume()
                await waiter.until(
                    lambda: session.state.status.task == "TASK_COMPLETED", timeout=30, what="the task's end"
                )
                assert len(fixed.requests) == 1, "the resumed task asked the gateway Settings name now"
                assert session.runtime_pid not in (None, first)
        finally:
            await session.close()
        replies = [i.text for i in session.state.items if isinstance(i, AssistantMessage)]
        assert replies == ["Hello from the new gateway."]
        notices = [i.text for i in session.state.items if isinstance(i, Notice)]
        assert any(f"current gateway settings ({fixed.url})" in text for text in notices), notices
        assert session.state.banner is None

    run(scenario())


def test_a_new_task_in_an_open_conversation_uses_the_gateway_settings_name_now(
    run: Run[None], backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    async def scenario() -> None:
        with (
            ScriptedGatewayThread({"turns": [{"text": "From the first."}]}) as first,
            ScriptedGatewayThread({"turns": [{"text": "From the second."}]}) as second,
        ):
            session, waiter, settings = conversation(backend, first.url, tmp_path, workspace)
            try:
                await session.send("One")
                await waiter.until(lambda: session.state.status.task == "TASK_COMPLETED", what="the first")
                settings.use_gateway(second.url)
                await session.send("Two")
                await waiter.until(
                    lambda: len([i for i in session.state.items if isinstance(i, AssistantMessage)]) == 2,
                    timeout=30,
                    what="the second answer",
                )
            finally:
                await session.close()
            assert (len(first.requests), len(second.requests)) == (1, 1)
            assert "One" in str(second.requests[0].body), "the conversation went on, with its history"

    run(scenario())


def _pause_or_failure(state: ConversationState) -> bool:
    return state.status.session == "SESSION_PAUSED" or state.status.task == "TASK_FAILED"


@pytest.mark.parametrize(
    ("case", "says", "action"),
    [
        ("refused", "could not be reached: connection refused", BannerAction.RESUME),
        ("dns", "could not be reached: its host name could not be resolved", BannerAction.RESUME),
        ("http500", "answered HTTP 500 (the gateway is overloaded)", BannerAction.RESUME),
        ("http401", "refused the credentials with HTTP 401 (bad key)", BannerAction.SETTINGS),
    ],
)
def test_the_gateway_banner_names_the_url_and_the_failure_once_and_offers_settings(
    run: Run[None],
    backend: Backend,
    workspace: Path,
    tmp_path: Path,
    case: str,
    says: str,
    action: BannerAction,
) -> None:
    failures: dict[str, list[dict[str, Any]]] = {
        "http500": [{"kind": "error", "status": 500, "message": "the gateway is overloaded"}] * 4,
        "http401": [{"kind": "error", "status": 401, "message": "bad key"}],
    }

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": failures.get(case, [])}) as scripted:
            url = {
                "refused": f"http://127.0.0.1:{closed_port()}",
                "dns": "http://gateway.invalid:8080",
            }.get(case, scripted.url)
            session, waiter, _ = conversation(backend, url, tmp_path, workspace)
            try:
                await session.send("Say hello")
                await waiter.until(lambda: _pause_or_failure(session.state), timeout=30, what="the failure")
            finally:
                await session.close()
        banner = session.state.banner
        assert banner is not None
        text = banner.text
        assert text.count(url) == 1, text
        assert says in text, text
        assert text.lower().count("could not be reached") <= 1, text
        assert text.count("HTTP") <= 1, text
        if case.startswith("http"):
            assert "could not be reached" not in text, text
        assert banner.action is action
        assert BannerAction.SETTINGS in (banner.action, banner.more), "Settings are one click away"

    run(scenario())
