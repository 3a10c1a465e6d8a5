"""``cowork exec`` against a runtime older than ``taskOptions.lastTask`` (one the backend still accepts,
installed as the compatible runtime): the runtime refuses the unknown option, and exec starts the
same task without it rather than fail. The runtime here is a stand-in that answers as such a runtime
does (``-32602``, the option named as an unknown field)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from contracts.errors import ErrorCode, ErrorShape
from contracts.ipc.client_core import RpcCallError
from contracts.jsonrpc import RpcErrorCode
from desktop.headless.approvals import UnattendedApprover
from desktop.headless.render import TextRenderer
from desktop.headless.run import ExecOptions, _Run, _start
from desktop.launch.backend import BackendAccess


class OlderRuntime:
    """Answers CreateSession, and refuses a StartTask carrying an option it does not know."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.started: list[dict[str, Any]] = []

    async def call(self, method: str, params: dict[str, Any], timeout: float = 15.0) -> Any:
        if method == "CreateSession":
            return {"sessionId": "sess_1"}
        options = params["taskOptions"]
        unknown = sorted(set(options) - self.known)
        if unknown:
            message = f"taskOptions.{unknown[0]} is not a known field"
            shape = ErrorShape(code=ErrorCode.INVALID_REQUEST, message=message)
            raise RpcCallError(RpcErrorCode.INVALID_PARAMS, "Invalid params", shape)
        self.started.append(dict(options))
        return {"taskId": params["taskId"], "status": "TASK_RUNNING"}


async def start_with(runtime: OlderRuntime, tmp_path: Path) -> tuple[int | None, str]:
    err = io.StringIO()
    run = _Run(TextRenderer(io.StringIO(), err), UnattendedApprover(approve_all=True))
    run.client = runtime  # type: ignore[assignment]
    options = ExecOptions(prompt="Do it", workspace=tmp_path, max_steps=5)
    access = BackendAccess(url="http://127.0.0.1:1", token="t", tenant_id="tenant", user_id="user")
    return await _start(run, options, access), err.getvalue()


async def test_an_older_runtime_gets_the_task_without_the_option_it_does_not_know(tmp_path: Path) -> None:
    runtime = OlderRuntime(known={"approvalMode", "maxSteps", "permissionRules"})
    status, said = await start_with(runtime, tmp_path)
    assert status is None, said  # started: exec goes on to wait for the task's end
    assert runtime.started == [{"approvalMode": "on_risky_actions", "maxSteps": 5}]


async def test_a_current_runtime_is_told_the_session_ends_with_the_task(tmp_path: Path) -> None:
    runtime = OlderRuntime(known={"approvalMode", "maxSteps", "permissionRules", "lastTask"})
    status, _ = await start_with(runtime, tmp_path)
    assert status is None
    assert runtime.started == [{"approvalMode": "on_risky_actions", "maxSteps": 5, "lastTask": True}]


async def test_any_other_refusal_still_stops_exec(tmp_path: Path) -> None:
    runtime = OlderRuntime(known={"lastTask"})  # refuses approvalMode, as if it were malformed
    status, said = await start_with(runtime, tmp_path)
    assert status is not None
    assert "taskOptions.approvalMode is not a known field" in said
    assert runtime.started == []
