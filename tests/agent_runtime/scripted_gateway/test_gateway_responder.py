"""A responder answers each request by what it contains, instead of a fixed script."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agent_runtime.scripted_gateway import ResponseTurn, ScriptedGateway

ANTHROPIC = "/v1/messages"


def body(text: str) -> dict[str, Any]:
    return {"model": "m-1", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": text}]}


async def post(url: str, payload: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(url + ANTHROPIC, json=payload)


async def test_a_responder_picks_each_turn_from_the_request_body() -> None:
    seen: list[str] = []

    def responder(dialect: str, request: dict[str, Any]) -> dict[str, Any]:
        prompt = request["messages"][-1]["content"]
        seen.append(dialect)
        return {"text": f"echo:{prompt}", "chunkSize": 100}

    async with ScriptedGateway(None, responder=responder) as gateway:
        first = await post(gateway.url, body("one"))
        second = await post(gateway.url, body("two"))
        gateway.assert_done()
        turns = [request.turn_index for request in gateway.requests]
    assert "echo:one" in first.text
    assert "echo:two" in second.text
    assert seen == ["anthropic", "anthropic"]
    assert turns == [0, 1]


async def test_a_responder_may_answer_with_a_turn_model_or_an_error_turn() -> None:
    answers: list[Any] = [ResponseTurn(text="model turn"), {"kind": "error", "status": 429, "retryAfter": 0}]

    async with ScriptedGateway(None, responder=lambda _d, _b: answers.pop(0)) as gateway:
        ok = await post(gateway.url, body("a"))
        limited = await post(gateway.url, body("b"))
    assert "model turn" in ok.text
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "0"


async def test_a_responder_that_says_nothing_more_is_answered_like_an_exhausted_script() -> None:
    async with ScriptedGateway(None, responder=lambda _d, _b: None) as gateway:
        response = await post(gateway.url, body("a"))
        with pytest.raises(AssertionError, match="after the script ran out"):
            gateway.assert_done()
    assert response.status_code == 500


async def test_a_failing_or_invalid_responder_is_reported_by_assert_done_not_a_crash() -> None:
    answers: list[Any] = [{"kind": "error", "status": 200}]

    def responder(_dialect: str, _body: dict[str, Any]) -> Any:
        if answers:
            return answers.pop(0)
        raise KeyError("no such step")

    async with ScriptedGateway(None, responder=responder) as gateway:
        invalid = await post(gateway.url, body("a"))
        raised = await post(gateway.url, body("b"))
        with pytest.raises(AssertionError) as failure:
            gateway.assert_done()
    assert invalid.status_code == raised.status_code == 500
    assert "status" in str(failure.value)
    assert "the responder raised KeyError" in str(failure.value)


def test_a_gateway_takes_a_script_or_a_responder_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        ScriptedGateway([{"text": "x"}], responder=lambda _d, _b: None)
