"""A session with a local MCP server over stdio (MCP 2025-11-25, basic/transports, "stdio").

Seed 003 §9 has remote servers only; local ones run only when the policy bundle allows them, and the
caller has already passed the command line through the command policy of ``RunCommand`` and built
the reduced environment it gets — this module just runs what it is given.

Messages are JSON-RPC objects, one per line, on the program's stdin and stdout (a line is capped like
an HTTP response body); its stderr is its log, of which the last lines are kept for the error shown
when it exits. The program starts a process group of its own (POSIX), so closing reaches what it
started: stdin is closed, then SIGTERM, then SIGKILL — the order the lifecycle spec gives. On Windows
the program itself is terminated.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from .elicitation import ElicitationHandler
from .errors import McpError, McpResponseTooLarge, McpTransportError
from .protocol import Call, McpProtocolSession, Message, answers, parse_messages
from .session import DEFAULT_CALL_TIMEOUT_S, MAX_RESPONSE_BYTES

__all__ = ["StdioMcpSession"]

logger = logging.getLogger(__name__)

_EXIT_GRACE_S: Final = 2.0
_STDERR_LINES: Final = 20


class StdioMcpSession(McpProtocolSession):
    """One local MCP server: ``open()`` starts it, ``aclose()`` stops it (and its process group)."""

    def __init__(
        self,
        server_name: str,
        command: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | os.PathLike[str] | None = None,
        elicitation: ElicitationHandler | None = None,
        on_tools_changed: Callable[[], None] | None = None,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        if not command:
            raise ValueError("a stdio MCP server needs a command")
        super().__init__(
            server_name,
            elicitation=elicitation,
            on_tools_changed=on_tools_changed,
            call_timeout_s=call_timeout_s,
            max_response_bytes=max_response_bytes,
        )
        self.command = list(command)
        self._env = dict(env)
        self._cwd = cwd
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self._failure: McpError | None = None
        self._write_lock = asyncio.Lock()
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def _connect(self) -> None:
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
                cwd=self._cwd,
                limit=self._max_response_bytes + 1,
                start_new_session=sys.platform != "win32",
            )
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise McpTransportError(
                f"Could not start the MCP server {self.server_name} ({self.command[0]}): {reason}"
            ) from exc
        self._tasks = [
            asyncio.create_task(self._read_stdout(), name=f"mcp-stdout-{self.server_name}"),
            asyncio.create_task(self._read_stderr(), name=f"mcp-stderr-{self.server_name}"),
        ]

    async def _exchange(self, message: Message, call: Call) -> Message:
        if self._failure is not None:
            raise self._failure
        answer: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[call.request_id] = answer
        try:
            await self._send(message)
            return await answer
        finally:
            self._pending.pop(call.request_id, None)

    async def _send(self, message: Message) -> None:
        process = self._process
        if process is None or process.stdin is None or self._failure is not None:
            raise self._failure or McpError(f"The MCP server {self.server_name} is not running")
        # json.dumps escapes newlines inside strings, so one message is one line, as stdio requires.
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        async with self._write_lock:
            try:
                process.stdin.write(line)
                await process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise McpTransportError(
                    f"The MCP server {self.server_name} stopped reading: {self._exited(process)}"
                ) from exc

    async def _disconnect(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            for stop in (signal.SIGTERM, signal.SIGKILL if sys.platform != "win32" else signal.SIGTERM):
                if await _exited_within(process, _EXIT_GRACE_S):
                    break
                _signal_group(process, stop)
            await _exited_within(process, _EXIT_GRACE_S)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._fail(McpError(f"The session with the MCP server {self.server_name} is closed"))

    async def _read_stdout(self) -> None:
        process = self._process
        assert process is not None
        stdout = process.stdout
        assert stdout is not None
        while True:
            try:
                line = await stdout.readline()
            except ValueError:  # a line over the stream's limit
                self._fail(McpResponseTooLarge(self._max_response_bytes))
                _signal_group(process, signal.SIGTERM)
                return
            if not line:
                break
            if line.strip():
                self._dispatch(line)
        # The output ended: give the program a moment to exit and its last words to arrive, for the
        # error every waiting request gets.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_EXIT_GRACE_S):
                await process.wait()
                await asyncio.gather(*(task for task in self._tasks if task is not asyncio.current_task()))
        self._fail(McpTransportError(f"The MCP server {self.server_name} exited: {self._exited(process)}"))

    def _dispatch(self, line: bytes) -> None:
        try:
            messages = parse_messages(line, self.server_name)
        except McpTransportError:
            # The spec forbids anything but MCP messages on stdout; a stray line is skipped, not fatal.
            logger.warning("MCP server %s wrote a line that is not a JSON-RPC message", self.server_name)
            return
        for message in messages:
            answer_id = message.get("id")
            pending = self._pending.get(answer_id) if isinstance(answer_id, int) else None
            if pending is None or not isinstance(answer_id, int) or not answers(message, answer_id):
                self._incoming(message, None)
            elif not pending.done():
                pending.set_result(message)

    async def _read_stderr(self) -> None:
        assert self._process is not None
        stderr = self._process.stderr
        assert stderr is not None
        while True:
            try:
                line = await stderr.readline()
            except ValueError:  # an endless line: keep reading past it
                continue
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip()
            self._stderr.append(text)
            logger.debug("MCP server %s: %s", self.server_name, text)

    def _fail(self, error: McpError) -> None:
        if self._failure is None:
            self._failure = error
        for pending in self._pending.values():
            if not pending.done():
                pending.set_exception(self._failure)

    def _exited(self, process: asyncio.subprocess.Process) -> str:
        code = process.returncode
        status = f"exit code {code}" if code is not None else "its output ended"
        tail = " | ".join(line for line in self._stderr if line)[-500:]
        return f"{status}{'; it said: ' + tail if tail else ''}"


async def _exited_within(process: asyncio.subprocess.Process, seconds: float) -> bool:
    try:
        async with asyncio.timeout(seconds):
            await process.wait()
    except TimeoutError:
        return False
    return True


def _signal_group(process: asyncio.subprocess.Process, stop: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform != "win32":
            os.killpg(process.pid, stop)
        else:
            process.terminate()
