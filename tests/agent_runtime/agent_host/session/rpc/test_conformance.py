"""Every example of the JSON-RPC 2.0 specification (§7) gets the specification's answer, over the
real local socket, from the runtime's server code running in its own process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.support.peers import RawPeer, raw_peer

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def peer() -> AsyncIterator[RawPeer]:
    async with raw_peer() as connected:
        yield connected


async def exchange(peer: RawPeer, text: str) -> Any:
    await peer.send(text + "\n")
    return await peer.receive()


async def assert_no_reply(peer: RawPeer, text: str) -> None:
    """Send ``text``, then a marker request: the marker's reply must be the next thing to arrive."""
    await peer.send(text + "\n")
    marker = await exchange(peer, '{"jsonrpc": "2.0", "method": "get_data", "id": "marker"}')
    assert marker == {"jsonrpc": "2.0", "result": ["hello", 5], "id": "marker"}


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        pytest.param(
            '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
            {"jsonrpc": "2.0", "result": 19, "id": 1},
            id="positional-params",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}',
            {"jsonrpc": "2.0", "result": -19, "id": 2},
            id="positional-params-reversed",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
            {"jsonrpc": "2.0", "result": 19, "id": 3},
            id="named-params",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}',
            {"jsonrpc": "2.0", "result": 19, "id": 4},
            id="named-params-reordered",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}',
            {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found: foobar"}, "id": "1"},
            id="method-not-found",
        ),
    ],
)
async def test_a_single_call_gets_the_specifications_answer(
    peer: RawPeer, request_text: str, expected: Any
) -> None:
    assert await exchange(peer, request_text) == expected


@pytest.mark.parametrize(
    "notification",
    [
        '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}',
        '{"jsonrpc": "2.0", "method": "foobar"}',
        '{"jsonrpc": "2.0", "method": "crash"}',
    ],
    ids=["known-method", "unknown-method", "failing-method"],
)
async def test_a_notification_is_never_answered(peer: RawPeer, notification: str) -> None:
    await assert_no_reply(peer, notification)


async def test_invalid_json_is_a_parse_error_with_null_id(peer: RawPeer) -> None:
    reply = await exchange(peer, '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]')
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700


async def test_an_invalid_request_object_is_an_invalid_request_with_null_id(peer: RawPeer) -> None:
    reply = await exchange(peer, '{"jsonrpc": "2.0", "method": 1, "params": "bar"}')
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600


async def test_a_batch_that_is_invalid_json_is_one_parse_error(peer: RawPeer) -> None:
    reply = await exchange(
        peer,
        '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]',
    )
    assert isinstance(reply, dict)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700


async def test_an_empty_batch_is_one_invalid_request(peer: RawPeer) -> None:
    reply = await exchange(peer, "[]")
    assert isinstance(reply, dict)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600


@pytest.mark.parametrize("batch", ["[1]", "[1,2,3]"])
async def test_each_invalid_member_of_a_batch_gets_its_own_invalid_request(peer: RawPeer, batch: str) -> None:
    reply = await exchange(peer, batch)
    assert isinstance(reply, list)
    assert len(reply) == batch.count(",") + 1
    assert all(item["id"] is None and item["error"]["code"] == -32600 for item in reply)


async def test_a_mixed_batch_answers_every_request_and_no_notification(peer: RawPeer) -> None:
    reply = await exchange(
        peer,
        """[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]""".replace("\n", " "),
    )
    assert isinstance(reply, list)
    by_id = {item["id"]: item for item in reply if item["id"] is not None}
    assert by_id["1"]["result"] == 7
    assert by_id["2"]["result"] == 19
    assert by_id["5"]["error"]["code"] == -32601
    assert by_id["9"]["result"] == ["hello", 5]
    invalid = [item for item in reply if item["id"] is None]
    assert len(invalid) == 1
    assert invalid[0]["error"]["code"] == -32600
    assert len(reply) == 5


async def test_a_batch_of_only_notifications_gets_no_reply(peer: RawPeer) -> None:
    await assert_no_reply(
        peer,
        '[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},'
        ' {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]',
    )


async def test_invalid_params_name_the_field_in_the_seeds_error_shape(peer: RawPeer) -> None:
    reply = await exchange(
        peer,
        '{"jsonrpc": "2.0", "id": 7, "method": "echo",'
        ' "params": {"sessionId": "s", "taskOptions": {"maxSteps": "40", "approvalMode": "never"}}}',
    )
    error = reply["error"]
    assert error["code"] == -32602
    assert error["data"]["code"] == "INVALID_REQUEST"
    assert error["data"]["retryable"] is False
    assert error["data"]["details"]["field"] == "taskOptions.maxSteps"
    assert error["data"]["details"]["problem"] == "must be an integer"
    assert "pydantic" not in str(reply).lower()
    assert "input_value" not in str(reply)


@pytest.mark.parametrize(
    ("params", "field", "problem"),
    [
        ('{"taskOptions": {"maxSteps": 1, "approvalMode": "never"}}', "sessionId", "is required"),
        (
            '{"sessionId": "", "taskOptions": {"maxSteps": 1, "approvalMode": "never"}}',
            "sessionId",
            "must not be empty",
        ),
        (
            '{"sessionId": "s", "taskOptions": {"maxSteps": 0, "approvalMode": "never"}}',
            "taskOptions.maxSteps",
            "must be at least 1",
        ),
        (
            '{"sessionId": "s", "taskOptions": {"maxSteps": 1, "approvalMode": "never"}, "extra": 1}',
            "extra",
            "is not a known field",
        ),
        ('{"sessionId": "s", "taskOptions": []}', "taskOptions", "must be an object"),
        ("[1, 2]", "params", "must be an object (named parameters)"),
        (
            '{"sessionId": "s", "taskOptions": {"maxSteps": 1, "approvalMode": "sometimes"}}',
            "taskOptions.approvalMode",
            "must be one of 'always', 'on_risky_actions' or 'never'",
        ),
        (
            '{"sessionId": "s", "taskOptions": {"maxSteps": 1, "approvalMode": "never", "notAfter": "soon"}}',
            "taskOptions.notAfter",
            "must be an ISO 8601 date-time string",
        ),
    ],
)
async def test_each_kind_of_bad_param_is_named_and_explained(
    peer: RawPeer, params: str, field: str, problem: str
) -> None:
    reply = await exchange(peer, f'{{"jsonrpc": "2.0", "id": 8, "method": "echo", "params": {params}}}')
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["details"]["field"] == field
    assert reply["error"]["data"]["details"]["problem"] == problem


async def test_valid_typed_params_round_trip_with_wire_names(peer: RawPeer) -> None:
    options = {"maxSteps": 40, "approvalMode": "on_risky_actions", "notAfter": "2026-02-21T15:00:00Z"}
    params = {"sessionId": "s", "taskOptions": options}
    reply = await exchange(
        peer, f'{{"jsonrpc": "2.0", "id": 9, "method": "echo", "params": {_json(params)}}}'
    )
    assert reply == {"jsonrpc": "2.0", "id": 9, "result": params}


async def test_an_application_error_carries_the_seeds_shape(peer: RawPeer) -> None:
    reply = await exchange(peer, '{"jsonrpc": "2.0", "id": 10, "method": "fail"}')
    assert reply["error"]["code"] == -32000
    assert reply["error"]["data"] == {
        "code": "SESSION_NOT_FOUND",
        "message": "No session sess_x",
        "retryable": False,
        "details": {"sessionId": "sess_x"},
    }


async def test_an_internal_error_leaks_nothing(peer: RawPeer) -> None:
    reply = await exchange(peer, '{"jsonrpc": "2.0", "id": 11, "method": "crash"}')
    assert reply["error"]["code"] == -32603
    assert reply["error"]["data"]["code"] == "INTERNAL_ERROR"
    assert "secret" not in str(reply)
    assert ".ssh" not in str(reply)


@pytest.mark.parametrize(
    ("text", "expected_id"),
    [
        ('{"jsonrpc": "1.0", "method": "noop", "id": 1}', 1),
        ('{"jsonrpc": "2.0", "method": "noop", "params": "x", "id": 2}', 2),
        ('{"jsonrpc": "2.0", "method": "noop", "id": 1.5}', None),
        ('{"jsonrpc": "2.0", "method": "noop", "id": true}', None),
        ('{"jsonrpc": "2.0", "method": "noop", "id": {"a": 1}}', None),
        ('{"jsonrpc": "2.0", "method": "noop", "id": 3, "extra": 1}', 3),
        ('"just a string"', None),
    ],
)
async def test_malformed_envelopes_are_invalid_requests(peer: RawPeer, text: str, expected_id: Any) -> None:
    reply = await exchange(peer, text)
    assert reply["error"]["code"] == -32600
    assert reply["id"] == expected_id


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc": "2.0", "method": "noop", "id": NaN}',
        "[" * 100_000 + "]" * 100_000,
        '{"jsonrpc": "2.0", "method": "noop", "id": ' + "9" * 5000 + "}",
        '\xff\xfe{"jsonrpc": "2.0"}',
    ],
    ids=["nan", "deep-nesting", "huge-integer", "not-utf8"],
)
async def test_hostile_json_is_a_parse_error_and_the_server_stays_up(peer: RawPeer, text: str) -> None:
    data = text.encode("latin-1") if text.startswith("\xff") else text.encode()
    await peer.send(data + b"\n")
    reply = await peer.receive()
    assert reply["error"]["code"] == -32700
    await assert_no_reply(peer, '{"jsonrpc": "2.0", "method": "update"}')


async def test_the_reserved_rpc_prefix_is_not_a_method(peer: RawPeer) -> None:
    reply = await exchange(peer, '{"jsonrpc": "2.0", "method": "rpc.discover", "id": 12}')
    assert reply["error"]["code"] == -32601


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
