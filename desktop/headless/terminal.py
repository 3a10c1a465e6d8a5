"""The terminal ``cowork exec`` asks on: one reader of its lines and one question at a time, shared by
the approval prompts and MCP servers' questions (two readers of one terminal would steal each other's
answers)."""

from __future__ import annotations

import asyncio
import threading
from typing import TextIO

__all__ = ["TerminalLines"]


class TerminalLines:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lines: asyncio.Queue[str | None] | None = None
        self.one_at_a_time = asyncio.Lock()
        """Held for the whole of one question, so prompts never interleave."""

    async def next_line(self) -> str | None:
        """The next line typed (without its end), or ``None`` once the terminal is closed."""
        if self._lines is None:
            self._lines = asyncio.Queue()
            _start_reader(self._stream, self._lines, asyncio.get_running_loop())
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)  # closed for every later question too
        return line


def _start_reader(stream: TextIO, lines: asyncio.Queue[str | None], loop: asyncio.AbstractEventLoop) -> None:
    # A daemon thread: a blocked read of the terminal must never keep the process from exiting.
    def read() -> None:
        while True:
            try:
                line = stream.readline()
            except (OSError, ValueError):
                line = ""
            loop.call_soon_threadsafe(lines.put_nowait, line or None)
            if not line:
                return

    threading.Thread(target=read, name="terminal-answers", daemon=True).start()
