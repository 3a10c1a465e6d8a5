"""The loopback redirect receiver of a native app (RFC 8252 §7.3): an HTTP listener on 127.0.0.1,
bound before the authorization URL is shown, that takes the one redirect carrying our ``state``,
answers the browser with a small page, and closes.

A request to ``/callback`` whose ``state`` is not ours is answered 400 and otherwise ignored: any
web page can make the browser send one, and letting it end the wait would let it cancel the
sign-in (MCP authorization, "Open Redirection": discard results with a mismatched state).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from urllib.parse import parse_qsl, urlsplit

from agent_runtime.tool_runtime.mcp.oauth.failures import AuthorizationFailed

__all__ = ["CALLBACK_PATH", "LoopbackReceiver"]

logger = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
_MAX_REQUEST_BYTES = 16 * 1024
_READ_TIMEOUT_S = 10.0

_DONE_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>Cowork</title></head>"
    "<body style='font-family: sans-serif; margin: 3em'><h1>{title}</h1><p>{text}</p></body></html>"
)


class LoopbackReceiver:
    """Listens on ``redirect_uri`` until one authorization response with the expected state arrives."""

    def __init__(self, server: asyncio.Server, inbox: _Inbox) -> None:
        self._server = server
        self._inbox = inbox
        self.port = int(server.sockets[0].getsockname()[1])
        self.redirect_uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    @classmethod
    async def bind(cls, port: int = 0) -> LoopbackReceiver:
        """Listen on 127.0.0.1:``port`` (0: any free port). Raises ``OSError`` when the port is taken."""
        inbox = _Inbox(asyncio.get_running_loop().create_future())
        server = await asyncio.start_server(inbox.serve, "127.0.0.1", port, limit=_MAX_REQUEST_BYTES)
        return cls(server, inbox)

    def expect(self, state: str) -> None:
        self._inbox.expected_state = state

    async def wait(self, timeout_s: float) -> dict[str, str]:
        """The query parameters of the redirect (``code``, ``state``, or ``error``…). Raises
        ``AuthorizationFailed`` when none arrives in time."""
        try:
            return await asyncio.wait_for(asyncio.shield(self._inbox.result), timeout_s)
        except TimeoutError:
            raise AuthorizationFailed(
                f"no answer from the sign-in page within {timeout_s:g} s; authorization was abandoned."
            ) from None

    async def aclose(self) -> None:
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)
        if not self._inbox.result.done():
            self._inbox.result.cancel()

    async def __aenter__(self) -> LoopbackReceiver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _Inbox:
    """What the listener's connections share: the state to expect, and the one result."""

    def __init__(self, result: asyncio.Future[dict[str, str]]) -> None:
        self.result = result
        self.expected_state: str | None = None

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _READ_TIMEOUT_S)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
                return
            status, title, text = self._answer(head)
            page = _DONE_PAGE.format(title=title, text=text).encode()
            head_lines = (
                f"HTTP/1.1 {status}",
                "Content-Type: text/html; charset=utf-8",
                f"Content-Length: {len(page)}",
                "Cache-Control: no-store",
                "Connection: close",
            )
            writer.write(("\r\n".join(head_lines) + "\r\n\r\n").encode() + page)
            with contextlib.suppress(ConnectionError):
                await writer.drain()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _answer(self, head: bytes) -> tuple[str, str, str]:
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return "405 Method Not Allowed", "Not here", "This address only receives a sign-in redirect."
        target = urlsplit(parts[1])
        if target.path != CALLBACK_PATH:
            return "404 Not Found", "Not here", "This address only receives a sign-in redirect."
        params = dict(parse_qsl(target.query, keep_blank_values=True))
        state = params.get("state", "")
        expected = self.expected_state
        if expected is None or not secrets.compare_digest(state.encode(), expected.encode()):
            logger.warning("ignored a sign-in redirect whose state is not the one Cowork sent")
            return (
                "400 Bad Request",
                "Sign-in response refused",
                "This response does not belong to the sign-in Cowork started, so it was ignored.",
            )
        if self.result.done():
            return (
                "200 OK",
                "Already done",
                "Cowork has already received this sign-in. You can close this tab.",
            )
        self.result.set_result(params)
        if "error" in params:
            return "200 OK", "Sign-in not completed", "Cowork was not authorized. You can close this tab."
        return "200 OK", "Signed in", "Cowork is authorized. You can close this tab and return to Cowork."
