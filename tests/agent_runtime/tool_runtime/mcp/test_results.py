"""Tool results translated: text, attachments, errors, structured content against the output schema."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agent_runtime.tool_runtime.mcp.results import McpAttachment, translate_result

SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
PNG = b"\x89PNG\r\n\x1a\n..."


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_text_blocks_are_joined() -> None:
    result = translate_result(
        {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}, None
    )
    assert (result.failed, result.output_text, result.attachments, result.structured) == (
        False,
        "one\ntwo",
        [],
        None,
    )


def test_images_audio_and_embedded_resources_become_attachments() -> None:
    raw = {
        "content": [
            {"type": "image", "data": _b64(PNG), "mimeType": "image/png"},
            {"type": "audio", "data": _b64(b"RIFF"), "mimeType": "audio/wav"},
            {
                "type": "resource",
                "resource": {"uri": "file:///src/main.rs", "mimeType": "text/x-rust", "text": "fn main() {}"},
            },
            {"type": "resource", "resource": {"uri": "s3://bucket/blob.bin", "blob": _b64(b"\x00\x01")}},
        ]
    }
    result = translate_result(raw, None)
    assert not result.failed
    assert result.attachments == [
        McpAttachment("image", "image/png", PNG, "image-1.png"),
        McpAttachment("audio", "audio/wav", b"RIFF", "audio-2.wav"),
        McpAttachment("resource", "text/x-rust", b"fn main() {}", "main.rs", uri="file:///src/main.rs"),
        McpAttachment(
            "resource", "application/octet-stream", b"\x00\x01", "blob.bin", uri="s3://bucket/blob.bin"
        ),
    ]
    assert "image-1.png" in result.output_text
    assert "file:///src/main.rs" in result.output_text


def test_base64_wrapped_over_lines_is_accepted() -> None:
    wrapped = "\n".join(_b64(PNG * 20)[i : i + 76] for i in range(0, len(_b64(PNG * 20)), 76))
    result = translate_result(
        {"content": [{"type": "image", "data": wrapped, "mimeType": "image/png"}]}, None
    )
    assert result.attachments[0].data == PNG * 20


@pytest.mark.parametrize(
    "block",
    [
        {"type": "image", "data": "not base64!!", "mimeType": "image/png"},
        {"type": "audio", "data": None, "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "x:y", "blob": "%%%"}},
        {"type": "resource", "resource": {"uri": "x:y"}},
        {"type": "resource", "resource": {"text": "no uri"}},
        {"type": "text"},
        "not an object",
    ],
)
def test_a_malformed_block_fails_the_result_with_a_clear_message(block: Any) -> None:
    result = translate_result({"content": [{"type": "text", "text": "ok"}, block]}, None)
    assert result.failed
    assert result.attachments == []
    assert result.error is not None
    assert result.error.startswith("The MCP server's result was rejected")
    assert result.output_text == result.error


def test_a_resource_link_is_shown_not_fetched() -> None:
    raw = {
        "content": [
            {"type": "resource_link", "uri": "https://ex.com/d", "name": "doc", "description": "The doc"}
        ]
    }
    result = translate_result(raw, None)
    assert result.output_text == "[resource link: doc <https://ex.com/d>] The doc"
    assert result.attachments == []


def test_is_error_is_a_failed_result_with_the_tools_message() -> None:
    result = translate_result(
        {"content": [{"type": "text", "text": "rate limited"}], "isError": True}, SCHEMA
    )
    assert result.failed
    assert result.output_text == result.error == "rate limited"


def test_structured_content_matching_the_output_schema_is_kept() -> None:
    result = translate_result(
        {"content": [{"type": "text", "text": "5"}], "structuredContent": {"sum": 5}}, SCHEMA
    )
    assert not result.failed
    assert result.structured == {"sum": 5}
    assert result.output_text == "5"


def test_structured_content_alone_becomes_the_text() -> None:
    result = translate_result({"content": [], "structuredContent": {"sum": 5}}, SCHEMA)
    assert result.output_text == '{"sum": 5}'


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (
            {"content": [{"type": "text", "text": "5"}], "structuredContent": {"sum": "five"}},
            "does not match",
        ),
        ({"content": [{"type": "text", "text": "5"}], "structuredContent": {}}, "does not match"),
        ({"content": [{"type": "text", "text": "5"}]}, "returned no structured content"),
        ({"content": [], "structuredContent": ["not", "an", "object"]}, "not a JSON object"),
    ],
)
def test_a_result_that_fails_the_output_schema_is_failed_and_not_passed_on(
    raw: dict[str, Any], problem: str
) -> None:
    result = translate_result(raw, SCHEMA)
    assert result.failed
    assert problem in (result.error or "")
    assert "5" not in result.output_text.replace("5 more", "")
    assert result.structured is None


def test_content_that_is_not_a_list_fails() -> None:
    assert translate_result({"content": "text"}, None).failed


def test_an_unknown_block_type_is_mentioned() -> None:
    result = translate_result({"content": [{"type": "hologram"}]}, None)
    assert not result.failed
    assert "hologram" in result.output_text
