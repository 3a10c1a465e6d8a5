"""The public surfaces are what they claim: every name in ``__all__`` exists, and the list is pinned."""

from __future__ import annotations

import httpx
import pytest

import agent_runtime.agent_host.llm as llm
import agent_runtime.scripted_gateway as gateway
from agent_runtime.agent_host.llm import (
    GatewayConfig,
    LlmClient,
    LlmError,
    LlmRetriesExhausted,
    LlmUnreachable,
)
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import CoworkError

from .support import Recorder, ask


def test_the_llm_client_surface_is_pinned() -> None:
    assert sorted(llm.__all__) == sorted(
        [
            "DEFAULT_TIMEOUTS", "Dialect", "DiscardCallback", "GatewayConfig", "LlmClient", "LlmConfigError",
            "LlmError", "LlmGuardrailBlocked", "LlmMalformedToolCall", "LlmProtocolError", "LlmRateLimited",
            "LlmRejected", "LlmResponse", "LlmRetriesExhausted", "LlmServerError", "LlmStreamBroken",
            "LlmTimeout", "LlmTransientError", "LlmUnreachable", "LlmUsage", "RetryCallback", "RetrySettings",
            "TextCallback", "Timeouts", "request_url",
        ]
    )  # fmt: skip
    assert all(hasattr(llm, name) for name in llm.__all__)


def test_the_scripted_gateway_surface_is_pinned() -> None:
    assert sorted(gateway.__all__) == sorted(
        [
            "DEMO_LABEL", "ErrorTurn", "RawTurn", "RecordedRequest", "ResponseTurn", "Script", "ScriptError",
            "ScriptedGateway", "ScriptedGatewayThread", "ScriptedToolCall", "ScriptedUsage", "StreamError",
            "Responder", "load_script", "parse_script", "parse_turn",
        ]
    )  # fmt: skip
    assert all(hasattr(gateway, name) for name in gateway.__all__)


def test_every_llm_error_is_a_cowork_error_with_the_seed_shape() -> None:
    errors = [
        getattr(llm, name)
        for name in llm.__all__
        if name.startswith("Llm") and name.endswith(("Error", "ed"))
    ]
    for error in errors:
        if isinstance(error, type) and issubclass(error, BaseException):
            assert issubclass(error, LlmError)
            assert issubclass(error, CoworkError)


async def test_a_proxy_from_the_environment_is_not_used_for_a_loopback_gateway(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A dead proxy: a gateway on this machine must still be reached directly.
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with ScriptedGateway([{"text": "direct"}, {"kind": "error", "status": 500}]) as served:
        response = await ask(LlmClient(GatewayConfig(served.url, None, "openai")))
        assert response.text == "direct"
        # With the environment trusted explicitly, the (dead) proxy is used: proof the rule matters.
        recorder = Recorder()
        proxied = LlmClient(GatewayConfig(served.url, None, "openai"), trust_env=True, sleep=recorder.sleep)
        with pytest.raises(LlmRetriesExhausted) as caught:
            await ask(proxied, recorder)
        assert len(served.requests) == 1
    assert isinstance(caught.value.cause, LlmUnreachable)
    assert isinstance(caught.value.__cause__, LlmUnreachable)
    assert isinstance(caught.value.cause.__cause__, httpx.HTTPError)
