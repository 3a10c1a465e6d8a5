"""Fixtures for the MCP client's tests: the SDK's server and the hand-written one, each on loopback.

Imported by the test modules that use them (not a conftest, which the OAuth tests beside these do not
need)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from typing import Any

import pytest

from agent_runtime.tool_runtime.mcp.session import McpSession
from tests.support.mcp_servers import EdgeBehaviour, ServerLog, ServerThread, edge_server, sdk_server

__all__ = ["Served", "edge", "eventually", "sdk", "session"]


@dataclass
class Served:
    url: str
    log: ServerLog


@pytest.fixture
def sdk() -> Iterator[Served]:
    """The official SDK's streamable-HTTP server (event store on, retry 100 ms) at ``/mcp``."""
    app, log = sdk_server()
    with ServerThread(app) as server:
        yield Served(server.url, log)


@pytest.fixture
def edge() -> Iterator[Callable[..., Served]]:
    """Start the hand-written server with ``EdgeBehaviour(**kwargs)``, at the root path."""
    with ExitStack() as stack:

        def start(**behaviour: Any) -> Served:
            app, log = edge_server(EdgeBehaviour(**behaviour))
            server: AbstractContextManager[ServerThread] = ServerThread(app, path="/")
            running = stack.enter_context(server)
            return Served(running.url, log)

        yield start


@pytest.fixture
async def session(sdk: Served) -> AsyncIterator[McpSession]:
    """An open session with the SDK server (headless elicitation)."""
    from agent_runtime.tool_runtime.mcp.elicitation import answer_with_defaults

    opened = McpSession(
        "tests", sdk.url, allow_insecure_loopback=True, elicitation=answer_with_defaults, call_timeout_s=20
    )
    await opened.open()
    try:
        yield opened
    finally:
        await opened.aclose()


async def eventually(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Whether ``check()`` holds within ``timeout`` seconds, polling without blocking the loop."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True
