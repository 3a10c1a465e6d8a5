"""Image content in requests to the scripted gateway, checked the way the providers check it.

* **Anthropic**: a user message's ``{"type": "image", "source": {"type": "base64", "media_type",
  "data"}}`` block;
* **OpenAI**: a user message's ``{"type": "image_url", "image_url": {"url": "data:<type>;base64,<data>"}}``
  part.

Either must be a PNG, JPEG, GIF or WebP image within :data:`~contracts.images.MAX_IMAGE_BYTES` whose
bytes are of the declared type; anything else is refused with HTTP 400 in the provider's words, so a
client that builds a bad image block fails its tests here rather than against a real model.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ValidationError

from contracts.images import ImageContent
from contracts.validation import describe, validate_json_value

__all__ = ["image_problem", "images_in"]

Dialect = Literal["anthropic", "openai"]

_DATA_URL = re.compile(r"data:(?P<media>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)", re.DOTALL)


def images_in(dialect: Dialect, body: dict[str, Any]) -> list[tuple[str, str]]:
    """Every image of the request's messages as ``(media type, base64 data)``, in order; a malformed
    block is returned as it is found so that :func:`image_problem` can name it."""
    found: list[tuple[str, str]] = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if dialect == "anthropic" and block.get("type") == "image":
                source = block.get("source")
                source = source if isinstance(source, dict) else {}
                if source.get("type") != "base64":
                    found.append(("", ""))
                    continue
                found.append((str(source.get("media_type") or ""), str(source.get("data") or "")))
            elif dialect == "openai" and block.get("type") == "image_url":
                image_url = block.get("image_url")
                url = image_url.get("url") if isinstance(image_url, dict) else None
                match = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
                found.append((match["media"], match["data"]) if match else ("", ""))
    return found


def image_problem(dialect: Dialect, body: dict[str, Any]) -> str | None:
    """Why the request's images would be refused by the provider; ``None`` if they are fine."""
    for index, (media_type, data) in enumerate(images_in(dialect, body)):
        if not media_type or not data:
            shape = "source.type base64" if dialect == "anthropic" else "a base64 data: URL"
            return f"Image {index + 1}: only images given as {shape} are accepted"
        try:
            validate_json_value(ImageContent, {"mediaType": media_type, "data": data})
        except ValidationError as exc:
            return f"Image {index + 1}: {describe(exc.errors(include_url=False)[0])}"
    return None
