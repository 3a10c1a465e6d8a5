"""The JSON-RPC 2.0 server engine: one frame in, one reply out (or none).

This is the one place where exceptions become wire errors (see :mod:`contracts.jsonrpc` for the
codes). It does no I/O; :mod:`.connection` feeds it frames from a socket or stdio.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from agent_runtime.agent_host.session_runtime.errors import StateConflict as StateConflict
from contracts.errors import CoworkError, ErrorCode, ErrorShape
from contracts.ipc.framing import decode, encode
from contracts.jsonrpc import RpcErrorCode, rpc_code_for
from contracts.validation import invalid_request, validate_json_value

logger = logging.getLogger(__name__)

MAX_BATCH = 1000
_ENVELOPE_MEMBERS = frozenset({"jsonrpc", "id", "method", "params"})

RawHandler = Callable[[Any], Awaitable[Any]]


class InvalidParams(Exception):
    """Raised by a raw handler whose params do not fit; names the field like model validation does."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True, slots=True)
class _Method:
    handler: RawHandler
    params_model: type[BaseModel] | None


def _error(request_id: Any, code: RpcErrorCode, message: str, data: ErrorShape | None = None) -> Any:
    error: dict[str, Any] = {"code": int(code), "message": message}
    if data is not None:
        error["data"] = data.to_wire()
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _invalid_params(request_id: Any, shape: ErrorShape) -> Any:
    return _error(request_id, RpcErrorCode.INVALID_PARAMS, f"Invalid params: {shape.message}", shape)


def _shape(code: ErrorCode, message: str, **details: Any) -> ErrorShape:
    return ErrorShape(code=code, message=message, retryable=False, details=details)


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Dispatcher:
    """A table of methods and the rules of JSON-RPC 2.0 around calling them."""

    def __init__(self) -> None:
        self._methods: dict[str, _Method] = {}

    def add(self, name: str, handler: Callable[[Any], Awaitable[Any]], params: type[BaseModel]) -> None:
        """A method whose named params are validated against ``params`` before ``handler`` sees them."""
        self._register(name, _Method(handler, params))

    def add_raw(self, name: str, handler: RawHandler) -> None:
        """A method that receives params as sent (object, array or ``None``)."""
        self._register(name, _Method(handler, None))

    def _register(self, name: str, method: _Method) -> None:
        if name.startswith("rpc."):
            raise ValueError("method names starting with 'rpc.' are reserved by JSON-RPC 2.0")
        if name in self._methods:
            raise ValueError(f"method {name} is already registered")
        self._methods[name] = method

    @property
    def method_names(self) -> list[str]:
        return sorted(self._methods)

    async def handle_frame(self, frame: bytes) -> bytes | None:
        """Answer one frame; ``None`` when nothing is to be sent back (notifications)."""
        try:
            message = decode(frame)
        except ValueError:
            return encode(
                _error(None, RpcErrorCode.PARSE_ERROR, "Parse error: the message is not valid JSON")
            )
        if isinstance(message, list):
            reply = await self._handle_batch(message)
        else:
            reply = await self._handle_one(message)
        if reply is None:
            return None
        try:
            return encode(reply)
        except (TypeError, ValueError):
            logger.exception("a method returned a result that cannot be sent as JSON")
            request_id = None if isinstance(reply, list) else reply.get("id")
            return encode(self._internal_error(request_id))

    async def _handle_batch(self, messages: list[Any]) -> Any:
        if not messages:
            return _error(None, RpcErrorCode.INVALID_REQUEST, "Invalid Request: empty batch")
        if len(messages) > MAX_BATCH:
            return _error(
                None,
                RpcErrorCode.INVALID_REQUEST,
                f"Invalid Request: a batch may hold at most {MAX_BATCH} messages",
                _shape(ErrorCode.INVALID_REQUEST, "batch too large", maxBatch=MAX_BATCH),
            )
        replies = await asyncio.gather(*(self._handle_one(message) for message in messages))
        answered = [reply for reply in replies if reply is not None]
        return answered or None

    async def _handle_one(self, message: Any) -> Any:
        if not isinstance(message, dict):
            return _error(None, RpcErrorCode.INVALID_REQUEST, "Invalid Request: expected a JSON object")
        request_id = message.get("id")
        reply_id = request_id if _valid_id(request_id) else None
        problem = self._envelope_problem(message)
        if problem is not None:
            return _error(reply_id, RpcErrorCode.INVALID_REQUEST, f"Invalid Request: {problem}")
        is_notification = "id" not in message
        name: str = message["method"]
        method = self._methods.get(name)
        if method is None:
            if is_notification:
                return None
            return _error(request_id, RpcErrorCode.METHOD_NOT_FOUND, f"Method not found: {name}")
        reply = await self._call(method, message.get("params"), request_id)
        return None if is_notification else reply

    @staticmethod
    def _envelope_problem(message: dict[str, Any]) -> str | None:
        if message.get("jsonrpc") != "2.0":
            return 'jsonrpc must be exactly "2.0"'
        if not isinstance(message.get("method"), str):
            return "method must be a string"
        if "params" in message and not isinstance(message["params"], dict | list):
            return "params must be an object or an array"
        if "id" in message and not _valid_id(message["id"]):
            return "id must be a string, an integer or null"
        unknown = message.keys() - _ENVELOPE_MEMBERS
        if unknown:
            return f"unknown member {sorted(unknown)[0]!r}"
        return None

    async def _call(self, method: _Method, params: Any, request_id: Any) -> Any:
        try:
            if method.params_model is None:
                result = await method.handler(params)
            else:
                if isinstance(params, list):
                    problem = "must be an object (named parameters)"
                    shape = _shape(
                        ErrorCode.INVALID_REQUEST, f"params {problem}", field="params", problem=problem
                    )
                    return _invalid_params(request_id, shape)
                try:
                    validated = validate_json_value(method.params_model, {} if params is None else params)
                except ValidationError as exc:
                    return _invalid_params(request_id, invalid_request(exc))
                result = await method.handler(validated)
        except InvalidParams as exc:
            shape = _shape(ErrorCode.INVALID_REQUEST, str(exc), field=exc.field, problem=exc.problem)
            return _invalid_params(request_id, shape)
        except StateConflict as exc:
            return _error(request_id, RpcErrorCode.STATE_CONFLICT, exc.shape.message, exc.shape)
        except CoworkError as exc:
            code = rpc_code_for(exc.shape.code)
            if code is RpcErrorCode.INVALID_PARAMS:
                return _invalid_params(request_id, exc.shape)
            return _error(request_id, code, exc.shape.message, exc.shape)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("method handler failed")
            return self._internal_error(request_id)
        if isinstance(result, BaseModel):
            result = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    @staticmethod
    def _internal_error(request_id: Any) -> Any:
        shape = _shape(
            ErrorCode.INTERNAL_ERROR, "The runtime hit an unexpected error; details are in its log."
        )
        return _error(request_id, RpcErrorCode.INTERNAL_ERROR, "Internal error", shape)
