"""The transport-free half of a JSON-RPC client: ids, pending calls, reading replies.

Both clients — the plain asyncio one (:mod:`contracts.ipc.client`) and the desktop's Qt one — wrap
this, so there is one place that matches responses to calls and one place that fails them when the
connection goes away.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contracts.ipc.framing import decode, encode

if TYPE_CHECKING:
    from contracts.errors import ErrorCode, ErrorShape


class ConnectionClosed(ConnectionError):
    """The connection ended; every call still waiting fails with this and the reason."""


class ProtocolViolation(Exception):
    """The peer sent something that is not JSON-RPC 2.0; the connection must be closed."""


class RpcCallError(Exception):
    """The server answered a call with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: ErrorShape | None) -> None:
        super().__init__(f"{message} ({code})" if data is None else f"{data.code}: {data.message}")
        self.rpc_code = code
        self.rpc_message = message
        self.data = data

    @property
    def error_code(self) -> ErrorCode | None:
        """The seed's error code when the server sent one (``SESSION_NOT_FOUND``, …)."""
        return None if self.data is None else self.data.code


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: Any


class ClientCore:
    """Numbering, bookkeeping and decoding for one connection's calls."""

    def __init__(self) -> None:
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._closed: ConnectionClosed | None = None

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def request(self, method: str, params: Any) -> tuple[int, bytes, asyncio.Future[Any]]:
        """Register a call; returns its id, the frame to send and the future of its result."""
        if self._closed is not None:
            raise ConnectionClosed(str(self._closed))
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        return request_id, encode(message), future

    def forget(self, request_id: int) -> None:
        """Drop a call nobody waits for any more (timed out or cancelled); a late reply is ignored."""
        self._pending.pop(request_id, None)

    @staticmethod
    def notification(method: str, params: Any) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return encode(message)

    def receive(self, frame: bytes) -> list[Notification]:
        """Take one frame from the server: settle the calls it answers, return its notifications.

        Raises :class:`ProtocolViolation` for anything a JSON-RPC 2.0 server may not send.
        """
        try:
            message = decode(frame)
        except ValueError as exc:
            raise ProtocolViolation(f"server sent invalid JSON: {exc}") from None
        if isinstance(message, list):
            notifications: list[Notification] = []
            for item in message:
                notifications.extend(self._receive_one(item))
            return notifications
        return self._receive_one(message)

    def _receive_one(self, message: Any) -> list[Notification]:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise ProtocolViolation("server sent a message that is not JSON-RPC 2.0")
        if "method" in message:
            if "id" in message or not isinstance(message["method"], str):
                raise ProtocolViolation("server sent a request; this client serves no methods")
            return [Notification(message["method"], message.get("params"))]
        request_id = message.get("id")
        if "error" in message:
            error = self._error_of(message["error"])
            if request_id is None:
                # A reply to something the server could not read at all: the stream is out of step.
                raise ProtocolViolation(f"server reported: {error}")
            self._settle(request_id, error=error)
        elif "result" in message:
            self._settle(request_id, result=message["result"])
        else:
            raise ProtocolViolation("server sent a response with neither result nor error")
        return []

    @staticmethod
    def _error_of(error: Any) -> RpcCallError:
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            raise ProtocolViolation("server sent a malformed error object")
        data: ErrorShape | None = None
        if error.get("data") is not None:
            # Imported on the first error reply: pydantic costs a client a tenth of a second at start.
            from pydantic import ValidationError

            from contracts.errors import ErrorShape
            from contracts.validation import validate_json_value

            try:
                data = validate_json_value(ErrorShape, error["data"])
            except ValidationError:
                data = None
        return RpcCallError(error["code"], str(error.get("message", "")), data)

    def _settle(self, request_id: Any, *, result: Any = None, error: RpcCallError | None = None) -> None:
        future = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if future is None or future.done():
            return  # a late reply to a call that timed out or was cancelled
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def fail_all(self, reason: str) -> None:
        """Close the books: every waiting call fails with :class:`ConnectionClosed`."""
        if self._closed is None:
            self._closed = ConnectionClosed(reason)
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed(reason))


def timeout_error(method: str, timeout: float) -> TimeoutError:
    return TimeoutError(f"{method} got no answer within {timeout:g} s")
