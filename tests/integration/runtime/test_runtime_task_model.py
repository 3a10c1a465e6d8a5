"""A task's model (``taskOptions.model``): the user picks another model for a conversation's next task;
the runtime calls it when the policy allows it, refuses one the policy does not (naming the field), and
a later task without one goes back to the configured model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.ipc.client_core import RpcCallError
from tests.integration.runtime.harness import Backend, Launch, open_session, start_backend

INVALID_PARAMS = -32602


@pytest.fixture(scope="module")
def two_model_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    config = tmp_path_factory.mktemp("two-models")
    (config / "default.toml").write_text(
        "[llmPolicy]\n"
        'allowedModels = ["demo-model", "bigger-model"]\n'
        "maxInputTokens = 100000\n"
        "maxOutputTokens = 4000\n"
        "maxSessionTokens = 10000000\n"
    )
    with start_backend(tmp_path_factory.mktemp("two-models-backend"), config_dir=config) as running:
        yield running


async def test_a_task_calls_the_model_it_names_and_the_next_one_the_configured_model(
    launch: Launch, two_model_backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([{"text": "From the bigger model."}, {"text": "Back to demo."}]) as gateway:
        rt = await open_session(launch, gateway.url, two_model_backend, workspace)
        first = await rt.run_task("Think hard", model="bigger-model")
        second = await rt.run_task("And now?", task_id="task_2")
        asked = [request.body["model"] for request in gateway.requests]

    assert (first["eventType"], second["eventType"]) == ("task_completed", "task_completed")
    assert asked == ["bigger-model", "demo-model"]
    completed = [event["payload"]["model"] for event in rt.find("llm_request_completed")]
    assert completed == ["bigger-model", "demo-model"]


async def test_a_model_the_policy_does_not_allow_is_refused_naming_the_field(
    launch: Launch, two_model_backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await open_session(launch, gateway.url, two_model_backend, workspace)
        with pytest.raises(RpcCallError) as refused:
            await rt.start_task("hi", model="forbidden-model")
        assert gateway.requests == []
    assert refused.value.rpc_code == INVALID_PARAMS
    assert refused.value.data is not None
    message = refused.value.data.message
    assert "taskOptions.model" in message
    assert "forbidden-model" in message
    assert "demo-model, bigger-model" in message
    assert (await rt.state())["sessionStatus"] == "SESSION_RUNNING"
