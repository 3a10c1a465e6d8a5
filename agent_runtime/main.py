"""``cowork-agent-runtime``: the agent runtime program, and its composition root.

One session per process (seed 000 §1). ``--connect NAME`` connects to the desktop's local server and
authenticates with the one-time secret the desktop put in ``COWORK_RPC_SECRET``; ``--stdio`` serves
JSON-RPC on stdin/stdout for headless use. This module is the one place that wires the tool runtime
into the agent host's ``ToolRouter`` protocol (docs/architecture/index.md "Boundaries").
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import importlib
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from contracts.ipc import eventloop
from contracts.logs import JsonLinesFormatter

if TYPE_CHECKING:
    from agent_runtime.agent_host.routing import ToolRouter
    from agent_runtime.agent_host.session.host import SessionHost
    from agent_runtime.agent_host.session.rpc.dispatcher import Dispatcher
    from contracts.mcp_boundary import McpServers, McpSetup

__all__ = ["main"]

_PROGRAM_STARTED = time.perf_counter()
"""When this module was first imported: the start of ``startupMs`` (telemetry ``runtime_started``)."""

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_HANDSHAKE = 3
EXIT_BROKEN = 4
EXIT_SESSION_FAILED = 5
"""The session ended SESSION_FAILED (seed 000 §3.3): ``session_failed`` was sent, the checkpoint removed."""


def _os_family() -> str:
    if sys.platform == "darwin":
        return "macOS"
    return "Windows" if sys.platform == "win32" else "Linux"


def _router(paths: Sequence[str]) -> ToolRouter:
    from agent_runtime.tool_runtime import LocalToolRouter

    return LocalToolRouter(workspace_root=Path(paths[0]) if paths else None)


def _mcp_servers(setup: McpSetup) -> McpServers:
    # Only sessions with MCP servers configured get here: the MCP client and the SDK load then, never on
    # the way to "ready".
    from agent_runtime.tool_runtime.mcp.integration import McpManager

    return McpManager(setup)


def _load_in_background() -> concurrent.futures.Future[None]:
    """Import the session host (pydantic models, httpx, the policy engine…) and the tool runtime on a
    thread while the main thread connects to the desktop: the connection is up and reading long before
    the handlers exist. The tool runtime comes second — ``CreateSession`` needs its tool definitions —
    so it loads while a client that is still starting its backend has not sent ``CreateSession`` yet,
    rather than after it arrived."""
    done: concurrent.futures.Future[None] = concurrent.futures.Future()

    def load() -> None:
        # httpx imports its command-line client when click, rich and pygments happen to be installed
        # (~30 ms of the way to the first LLM request); the runtime never runs it. A None entry makes
        # that import fail, and httpx falls back as it does when they are missing.
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
        try:
            importlib.import_module("agent_runtime.agent_host.session.host")
        except BaseException as exc:  # surfaces on the main thread, where it is awaited
            done.set_exception(exc)
            return
        done.set_result(None)
        # Not awaited: _router imports it again when a session needs it (an import in progress on
        # this thread is waited for there, and a failure is raised there).
        with contextlib.suppress(Exception):
            importlib.import_module("agent_runtime.tool_runtime")

    threading.Thread(target=load, name="load-host", daemon=True).start()
    return done


async def _serve(args: argparse.Namespace, loading: concurrent.futures.Future[None]) -> int:
    from agent_runtime.agent_host.session.rpc.connection import (
        DeferredDispatcher,
        RpcConnection,
        connect_to_desktop,
        open_stdio,
    )
    from contracts.ipc.handshake import HandshakeError, take_secret

    if args.stdio:
        reader, writer = await open_stdio()
        rest = b""
    else:
        try:
            reader, writer, rest = await connect_to_desktop(args.connect, take_secret(os.environ))
        except (HandshakeError, OSError) as exc:
            print(f"cowork-agent-runtime: {exc}", file=sys.stderr)
            return EXIT_HANDSHAKE

    exit_requested = asyncio.Event()
    hosts: list[SessionHost] = []

    failed: list[BaseException] = []

    async def build() -> Dispatcher:
        try:
            await asyncio.wrap_future(loading)
        except BaseException as exc:  # a broken installation: say so and exit, never hang the desktop
            logging.getLogger(__name__).critical("The agent runtime could not load: %r", exc)
            failed.append(exc)
            exit_requested.set()
            raise
        from agent_runtime.agent_host.session.host import SessionHost
        from agent_runtime.agent_host.session.rpc.dispatcher import Dispatcher
        from contracts.enums import OsFamily

        host = SessionHost(
            router_factory=_router,
            os_family=OsFamily(_os_family()),
            exit_requested=exit_requested,
            mcp_factory=_mcp_servers,
            startup_ms=(time.perf_counter() - _PROGRAM_STARTED) * 1000.0,
        )
        hosts.append(host)
        dispatcher = Dispatcher()
        host.register(dispatcher)
        host.attach(connection.notify)
        return dispatcher

    connection = RpcConnection(reader, writer, DeferredDispatcher(build()), initial=rest)
    serving = asyncio.create_task(connection.serve())
    exiting = asyncio.create_task(exit_requested.wait())
    done, _ = await asyncio.wait({serving, exiting}, return_when=asyncio.FIRST_COMPLETED)
    if exiting in done:
        await connection.finish()
        # Closing the socket ends the read loop, but a pipe on stdin stays open as long as the client
        # keeps it open: stop reading, the session is over.
        serving.cancel()
    else:
        # The desktop went away without a Shutdown: stop like a crash would, keeping the checkpoint,
        # so the desktop can resume the session in a new runtime.
        exiting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await serving
    for host in hosts:
        await host.aclose()
    if failed:
        return EXIT_BROKEN
    return EXIT_SESSION_FAILED if any(host.session_failed for host in hosts) else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["mcp"]:
        # The operators' MCP commands (``mcp probe URL``): imported only here, so the session's own
        # start (--connect, --stdio) never loads the MCP client.
        from agent_runtime.tool_runtime.mcp.probe import command_main

        return command_main(argv[1:])
    if argv[:1] == ["fork-server"]:
        # cowork exec's warm runtime (agent_runtime.fork_server): its children run main() below.
        from agent_runtime.fork_server import command_main as fork_server_main

        return fork_server_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="cowork-agent-runtime",
        description="The Cowork agent runtime: one session per process.",
        epilog="cowork-agent-runtime mcp probe URL … checks an MCP server (see mcp probe --help).",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--connect", metavar="NAME", help="the desktop's local server to connect to")
    mode.add_argument("--stdio", action="store_true", help="serve JSON-RPC on stdin/stdout")
    args = parser.parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLinesFormatter())
    logging.basicConfig(level=os.environ.get("COWORK_LOG_LEVEL", "WARNING").upper(), handlers=[handler])
    loading = _load_in_background()
    try:
        return eventloop.run(_serve(args, loading))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
