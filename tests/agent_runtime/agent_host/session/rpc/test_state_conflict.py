"""A request the session's state refuses is a state conflict (``-32001``), not invalid params.

The conflicts a client can provoke (a task already running, a paused session, a second session, an
incompatible client) are driven over the wire in ``tests/integration/runtime/test_runtime_lifecycle``;
an illegal transition of the state tables cannot be reached from the wire once the runtime is right,
so it is raised here by a handler, as the host would.
"""

from __future__ import annotations

import json
from typing import Any

from agent_runtime.agent_host.session.machine import SessionMachine
from agent_runtime.agent_host.session.rpc import Dispatcher
from contracts.enums import SessionStatus, TaskStatus
from contracts.jsonrpc import JsonRpcErrorResponse


async def answer(dispatcher: Dispatcher, message: Any) -> Any:
    reply = await dispatcher.handle_frame(json.dumps(message).encode())
    return None if reply is None else json.loads(reply)


async def test_an_illegal_transition_travels_as_a_state_conflict_with_the_seed_error_shape() -> None:
    machine = SessionMachine(session=SessionStatus.SESSION_COMPLETED, task=TaskStatus.IDLE)

    async def restart(_: Any) -> None:
        machine.to_session(SessionStatus.SESSION_RUNNING)

    dispatcher = Dispatcher()
    dispatcher.add_raw("Restart", restart)
    reply = await answer(dispatcher, {"jsonrpc": "2.0", "id": 7, "method": "Restart"})

    JsonRpcErrorResponse.model_validate_json(json.dumps(reply))
    assert reply["error"]["code"] == -32001
    assert reply["error"]["message"] == "The session cannot go from SESSION_COMPLETED to SESSION_RUNNING."
    assert reply["error"]["data"] == {
        "code": "INVALID_REQUEST",
        "message": "The session cannot go from SESSION_COMPLETED to SESSION_RUNNING.",
        "retryable": False,
        "details": {"level": "session", "from": "SESSION_COMPLETED", "to": "SESSION_RUNNING"},
    }
    assert machine.session is SessionStatus.SESSION_COMPLETED
