"""JSON-RPC 2.0 envelopes and error codes, as the desktop and the runtime exchange them.

The runtime is the JSON-RPC server (seed 000 §3.1); the desktop, or a headless client, calls it and
receives ``SessionEvent`` notifications. How messages are framed on the byte stream is described in
:mod:`contracts.ipc.framing`.

Errors follow the specification's codes. Where an error comes from Cowork itself rather than from the
protocol, ``error.data`` carries the seed's error shape (:class:`contracts.errors.ErrorShape`):

* ``-32700`` parse error, ``-32600`` invalid request, ``-32601`` method not found: protocol only;
* ``-32602`` invalid params: ``data`` is an ``INVALID_REQUEST`` shape whose ``details.field`` names the
  offending field (``taskOptions.maxSteps``) and ``details.problem`` says what is wrong with it;
* ``-32603`` internal error: ``data`` is an ``INTERNAL_ERROR`` shape with no implementation detail;
* ``-32000`` application error: ``data`` is the shape the method raised (``SESSION_NOT_FOUND``, …);
* ``-32001`` state conflict: the params are valid but the session's state refuses the request (a task
  is already running, the session is paused or has ended, a transition outside the state tables, an
  incompatible client); ``data`` is the shape (``INVALID_REQUEST``, ``details`` name the state). The
  same request may succeed once the state changes.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from contracts.errors import ErrorCode, ErrorShape

JSONRPC_VERSION = "2.0"

RequestId = int | str
"""An id is a string or an integer. Fractional numbers are refused (the specification discourages
them, and float ids cannot be matched reliably); ``null`` only appears in error responses."""


class RpcErrorCode(IntEnum):
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    APPLICATION_ERROR = -32000
    STATE_CONFLICT = -32001


def rpc_code_for(code: ErrorCode) -> RpcErrorCode:
    """The JSON-RPC code under which an application error of the seed's ``code`` travels."""
    if code is ErrorCode.INVALID_REQUEST:
        return RpcErrorCode.INVALID_PARAMS
    if code is ErrorCode.INTERNAL_ERROR:
        return RpcErrorCode.INTERNAL_ERROR
    return RpcErrorCode.APPLICATION_ERROR


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class JsonRpcRequest(_Envelope):
    jsonrpc: Literal["2.0"]
    id: RequestId
    method: str
    params: dict[str, Any] | list[Any] | None = None


class JsonRpcNotification(_Envelope):
    jsonrpc: Literal["2.0"]
    method: str
    params: dict[str, Any] | list[Any] | None = None


class JsonRpcErrorObject(_Envelope):
    code: int
    message: str
    data: ErrorShape | None = None


class JsonRpcSuccessResponse(_Envelope):
    jsonrpc: Literal["2.0"]
    id: RequestId
    result: Any


class JsonRpcErrorResponse(_Envelope):
    jsonrpc: Literal["2.0"]
    id: RequestId | None
    error: JsonRpcErrorObject
