"""The eight JSON-RPC methods' params and results (seed 000 §3.1, seed 001 §6.1)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from contracts.enums import ApprovalMode, Capability, OsFamily, SessionStatus, TaskStatus
from contracts.methods import (
    METHODS,
    CreateSessionParams,
    SessionState,
    StartTaskParams,
    TaskOptions,
)
from contracts.validation import invalid_request, validate_json_value

SEED_CREATE_SESSION: dict[str, Any] = {
    "userId": "user_123",
    "tenantId": "tenant_abc",
    "executionEnvironment": "desktop",
    "workspaceHint": {"localPaths": ["/Users/suman/projects/demo"]},
    "clientInfo": {"desktopAppVersion": "1.0.0", "localAgentHostVersion": "1.0.0", "osFamily": "macOS"},
    "supportedCapabilities": ["File.Read", "File.Write", "Shell.Exec", "Network.Http", "LLM.Call"],
}

SEED_START_TASK: dict[str, Any] = {
    "sessionId": "sess_789",
    "taskId": "task_001",
    "prompt": "Refactor the API client and add tests",
    "taskOptions": {"maxSteps": 40, "allowNetwork": True, "approvalMode": "on_risky_actions"},
}

SEED_SESSION_STATE: dict[str, Any] = {
    "sessionStatus": "SESSION_RUNNING",
    "task": {"taskId": "task_001", "status": "EXECUTING_TOOLS", "stepCount": 3, "maxSteps": 40},
}


@pytest.mark.parametrize(
    ("model", "seed"),
    [
        (CreateSessionParams, SEED_CREATE_SESSION),
        (StartTaskParams, SEED_START_TASK),
        (SessionState, SEED_SESSION_STATE),
    ],
    ids=["CreateSession (001 §6.1)", "StartTask (001 §6.1)", "GetSessionState (000 §3.3)"],
)
def test_the_seeds_examples_validate_and_round_trip_exactly(
    model: type[BaseModel], seed: dict[str, Any]
) -> None:
    parsed = validate_json_value(model, seed)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == seed


def test_wire_values_become_python_enums() -> None:
    params = validate_json_value(CreateSessionParams, SEED_CREATE_SESSION)
    assert params.client_info.os_family is OsFamily.MACOS
    assert Capability.SHELL_EXEC in params.supported_capabilities
    state = validate_json_value(SessionState, SEED_SESSION_STATE)
    assert state.session_status is SessionStatus.SESSION_RUNNING
    assert state.task is not None
    assert state.task.status is TaskStatus.EXECUTING_TOOLS


def test_task_options_default_to_the_seeds_values() -> None:
    params = validate_json_value(StartTaskParams, {"sessionId": "s", "taskId": "t", "prompt": "hi"})
    assert params.task_options == TaskOptions(
        max_steps=40, allow_network=True, approval_mode=ApprovalMode.ON_RISKY_ACTIONS
    )


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"taskOptions": {"maxSteps": "40"}}, "taskOptions.maxSteps", "must be an integer"),
        ({"taskOptions": {"maxSteps": 0}}, "taskOptions.maxSteps", "must be at least 1"),
        ({"taskOptions": {"allowNetwork": "yes"}}, "taskOptions.allowNetwork", "must be true or false"),
        ({"taskOptions": {"approvalMode": "ask"}}, "taskOptions.approvalMode", "must be one of"),
        ({"prompt": ""}, "prompt", "must not be empty"),
        ({"taskID": "t"}, "taskID", "is not a known field"),
    ],
)
def test_bad_start_task_params_are_refused_naming_the_field(
    change: dict[str, Any], field: str, problem: str
) -> None:
    params = {**SEED_START_TASK, **change}
    with pytest.raises(ValidationError) as raised:
        validate_json_value(StartTaskParams, params)
    shape = invalid_request(raised.value)
    assert shape.details["field"] == field
    assert shape.details["problem"].startswith(problem)


def test_python_code_uses_snake_case_and_the_wire_sees_camel_case() -> None:
    options = TaskOptions(max_steps=5, approval_mode=ApprovalMode.NEVER)
    assert options.to_wire() == {"maxSteps": 5, "allowNetwork": True, "approvalMode": "never"}


def test_the_method_table_lists_the_eight_methods_of_the_seed_the_two_of_mcp_and_revert() -> None:
    assert sorted(METHODS) == sorted(
        [
            "CreateSession",
            "StartTask",
            "CancelTask",
            "ResumeSession",
            "GetSessionState",
            "GetPatchPreview",
            "ApproveAction",
            "Shutdown",
            "AnswerElicitation",
            "GetMcpServers",
            "RevertChanges",
        ]
    )
    assert all(spec.name == name for name, spec in METHODS.items())
