"""The scripted gateway checks image content as the providers do (HTTP 400 for a malformed block)."""

from __future__ import annotations

import base64

import httpx

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.test_runtime_images import DATA


def anthropic_body(source: dict[str, object]) -> dict[str, object]:
    return {
        "model": "m",
        "max_tokens": 10,
        "stream": True,
        "messages": [
            {"role": "user", "content": [{"type": "image", "source": source}, {"type": "text", "text": "?"}]}
        ],
    }


def openai_body(url: str) -> dict[str, object]:
    return {
        "model": "m",
        "stream": True,
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}],
    }


async def test_well_formed_images_are_answered_in_both_dialects() -> None:
    async with ScriptedGateway([{"text": "ok"}, {"text": "ok"}]) as gateway, httpx.AsyncClient() as http:
        first = await http.post(
            f"{gateway.url}/v1/messages",
            json=anthropic_body({"type": "base64", "media_type": "image/png", "data": DATA}),
        )
        second = await http.post(
            f"{gateway.url}/v1/chat/completions", json=openai_body(f"data:image/png;base64,{DATA}")
        )
        gateway.assert_done()
    assert first.status_code == 200, first.text
    assert second.status_code == 200, second.text


async def test_malformed_images_are_refused_with_the_reason() -> None:
    text = base64.b64encode(b"not an image").decode()
    async with ScriptedGateway([]) as gateway, httpx.AsyncClient() as http:
        wrong_type = await http.post(
            f"{gateway.url}/v1/messages",
            json=anthropic_body({"type": "base64", "media_type": "image/jpeg", "data": DATA}),
        )
        by_url = await http.post(
            f"{gateway.url}/v1/messages",
            json=anthropic_body({"type": "url", "url": "https://example.com/a.png"}),
        )
        not_image = await http.post(
            f"{gateway.url}/v1/chat/completions", json=openai_body(f"data:image/png;base64,{text}")
        )
        remote = await http.post(
            f"{gateway.url}/v1/chat/completions", json=openai_body("https://example.com/a.png")
        )
    assert wrong_type.status_code == 400
    assert "Image 1: data is image/png data, not image/jpeg" in wrong_type.text
    assert by_url.status_code == 400
    assert "source.type base64" in by_url.text
    assert not_image.status_code == 400
    assert "not a PNG, JPEG, GIF or WebP image" in not_image.text
    assert remote.status_code == 400
    assert "base64 data: URL" in remote.text
