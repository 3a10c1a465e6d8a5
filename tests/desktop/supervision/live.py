"""Helpers for the desktop tests that run real processes: the local backend, the scripted gateway
(in a thread of the test process), real runtimes started by the window's own launcher, and waits
that wake on every change of a conversation's state (bounded, never a fixed sleep)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from desktop.conversation.items import Item
from desktop.conversation.session import Identity
from desktop.conversation.state import ConversationState
from desktop.launch.runtime import runtime_command
from desktop.supervision.runtime import QtRuntimeLauncher
from tests.integration.runtime.harness import runtime_environment
from tests.support.backend import Backend

__all__ = ["StateWaiter", "held_command", "identity", "launcher", "runtime_env", "tool_call"]

T = TypeVar("T")


def identity(backend: Backend) -> Identity:
    return Identity(
        user_id=backend.user_id,
        tenant_id=backend.tenant_id,
        app_version="0.1.0",
        runtime_version=lambda: "0.1.0",
        os_family="Linux",
    )


def runtime_env(backend: Backend, gateway_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """What the window gives a runtime (backend, gateway, data folder), as the runtime tests do."""
    return runtime_environment(backend, gateway_url, data_dir, approval_timeout_s=60, extra=extra or None)


def launcher(env: Mapping[str, str], log_dir: Path) -> QtRuntimeLauncher:
    async def environment() -> Mapping[str, str]:
        return env

    return QtRuntimeLauncher(command=lambda: runtime_command(env), environment=environment, log_dir=log_dir)


def tool_call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    """A scripted turn that makes one tool call."""
    return {"toolCalls": [{"id": call_id, "name": name, "arguments": arguments}]}


def held_command(started: Path, go: Path) -> str:
    """A command that creates ``started`` and then waits (at most ~30 s) until ``go`` exists."""
    wait = "n=0; while [ ! -e {go} ]; do n=$((n+1)); [ $n -gt 1500 ] && exit 9; sleep 0.02; done"
    return f"touch {started}; " + wait.format(go=go)


class StateWaiter:
    """Observes a :class:`ConversationState`; ``await until(check)`` re-checks on every change."""

    def __init__(self, state: ConversationState) -> None:
        self.state = state
        self._changed = asyncio.Event()
        state.subscribe(self)

    def _wake(self) -> None:
        self._changed.set()

    def item_added(self, item: Item) -> None:
        self._wake()

    def item_changed(self, item: Item) -> None:
        self._wake()

    def items_reset(self) -> None:
        self._wake()

    def status_changed(self) -> None:
        self._wake()

    def banner_changed(self) -> None:
        self._wake()

    async def until(self, check: Callable[[], T | None], *, timeout: float = 20.0, what: str = "") -> T:
        deadline = time.monotonic() + timeout
        while True:
            found = check()
            if found:
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                banner = self.state.banner.text if self.state.banner else None
                raise TimeoutError(
                    f"no {what or 'change'} within {timeout:g} s; status {self.state.status},"
                    f" banner {banner!r}, items {[type(i).__name__ for i in self.state.items]}"
                )
            self._changed.clear()
            # Also wake now and then: some conditions (a file, a process) change outside the state.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(remaining, 0.1)):
                    await self._changed.wait()
