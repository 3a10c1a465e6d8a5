"""The dispatcher's own rules, in process (the socket-level behaviour is in test_conformance)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_runtime.agent_host.session.rpc import Dispatcher
from agent_runtime.agent_host.session.rpc.dispatcher import MAX_BATCH
from contracts.errors import CoworkError, ErrorCode


async def answer(dispatcher: Dispatcher, message: Any) -> Any:
    reply = await dispatcher.handle_frame(json.dumps(message).encode())
    return None if reply is None else json.loads(reply)


def test_method_names_reserved_by_the_specification_cannot_be_registered() -> None:
    async def handler(_: Any) -> None:
        return None

    with pytest.raises(ValueError, match="reserved"):
        Dispatcher().add_raw("rpc.ping", handler)


def test_a_method_cannot_be_registered_twice() -> None:
    async def handler(_: Any) -> None:
        return None

    dispatcher = Dispatcher()
    dispatcher.add_raw("Ping", handler)
    with pytest.raises(ValueError, match="already registered"):
        dispatcher.add_raw("Ping", handler)


async def test_a_result_that_is_not_json_becomes_an_internal_error() -> None:
    async def returns_a_set(_: Any) -> Any:
        return {1, 2}

    dispatcher = Dispatcher()
    dispatcher.add_raw("odd", returns_a_set)
    reply = await answer(dispatcher, {"jsonrpc": "2.0", "id": 1, "method": "odd"})
    assert reply["id"] == 1
    assert reply["error"]["code"] == -32603
    assert reply["error"]["data"]["code"] == "INTERNAL_ERROR"


async def test_a_batch_over_the_limit_is_refused_as_a_whole() -> None:
    batch = [{"jsonrpc": "2.0", "method": "x"}] * (MAX_BATCH + 1)
    reply = await answer(Dispatcher(), batch)
    assert reply["error"]["code"] == -32600
    assert reply["error"]["data"]["details"] == {"maxBatch": MAX_BATCH}


@pytest.mark.parametrize(
    ("code", "rpc_code"),
    [
        (ErrorCode.SESSION_NOT_FOUND, -32000),
        (ErrorCode.INVALID_REQUEST, -32602),
        (ErrorCode.INTERNAL_ERROR, -32603),
    ],
)
async def test_an_application_error_travels_under_the_matching_json_rpc_code(
    code: ErrorCode, rpc_code: int
) -> None:
    async def fails(_: Any) -> None:
        raise CoworkError(code, "it failed", retryable=True, details={"why": "test"})

    dispatcher = Dispatcher()
    dispatcher.add_raw("fails", fails)
    reply = await answer(dispatcher, {"jsonrpc": "2.0", "id": "a", "method": "fails"})
    assert reply["error"]["code"] == rpc_code
    assert reply["error"]["data"] == {
        "code": code.value,
        "message": "it failed",
        "retryable": True,
        "details": {"why": "test"},
    }


async def test_a_request_with_a_null_id_is_answered_with_a_null_id() -> None:
    async def pong(_: Any) -> str:
        return "pong"

    dispatcher = Dispatcher()
    dispatcher.add_raw("ping", pong)
    assert await answer(dispatcher, {"jsonrpc": "2.0", "id": None, "method": "ping"}) == {
        "jsonrpc": "2.0",
        "id": None,
        "result": "pong",
    }
