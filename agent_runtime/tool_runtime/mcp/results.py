"""Tool results in (seed 003 §9.2 step 4, §9.5; MCP 2025-11-25 server/tools, "Tool Result").

* ``text`` blocks are the output text, joined by newlines;
* ``image`` and ``audio`` blocks, and embedded ``resource`` blocks (text or base64 ``blob``), become
  attachments the caller stores as artifacts; each leaves a one-line mention in the text, so the model
  knows it is there. Data that is not valid base64 fails the result;
* a ``resource_link`` is shown in the text (its name, URI and description): it is not fetched;
* ``isError: true`` is a failed result whose text is the tool's own message;
* ``structuredContent`` is checked against the tool's ``outputSchema`` (seed 003 §9.3: "reject results
  that don't match expected types"): a mismatch, or a tool with an output schema that returns none, is
  a failed result that says so — and what the server sent is not passed on. With no text block, the
  structured content is the text (servers SHOULD send both, not all do).
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

__all__ = ["McpAttachment", "TranslatedResult", "translate_result"]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/svg+xml": ".svg",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mpeg": ".mp3",
    "audio/ogg": ".ogg",
    "audio/webm": ".webm",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "application/json": ".json",
    "application/pdf": ".pdf",
}
# Python's own table only: the system's (/etc/mime.types, the Windows registry) differs between machines,
# and an artifact's name should not.
_MIME_TYPES = mimetypes.MimeTypes(filenames=())


@dataclass(frozen=True)
class McpAttachment:
    kind: Literal["image", "audio", "resource"]
    mime_type: str
    data: bytes
    name: str
    """A file name for the artifact (no directory part)."""
    uri: str | None = None
    """An embedded resource's URI."""


@dataclass(frozen=True)
class TranslatedResult:
    failed: bool
    output_text: str
    attachments: list[McpAttachment]
    structured: dict[str, Any] | None
    error: str | None = field(default=None)
    """Why the result failed, in a sentence (the tool's own message for ``isError``)."""


class _Rejected(Exception):
    pass


def translate_result(raw: dict[str, Any], output_schema: dict[str, Any] | None) -> TranslatedResult:
    """The ``CallToolResult`` ``raw`` as Cowork shows it; ``output_schema`` is the tool's, if any."""
    try:
        texts, attachments = _content(raw.get("content", []))
        structured = raw.get("structuredContent")
        if structured is not None and not isinstance(structured, dict):
            raise _Rejected("the tool's structured content is not a JSON object")
        if raw.get("isError") is True:
            message = "\n".join(texts).strip() or "The tool reported an error without a message"
            return TranslatedResult(True, message, attachments, None, error=message)
        if output_schema is not None:
            _check_structured(structured, output_schema)
    except _Rejected as exc:
        message = f"The MCP server's result was rejected: {exc}"
        return TranslatedResult(True, message, [], None, error=message)
    if not texts and structured is not None:
        texts = [json.dumps(structured, ensure_ascii=False)]
    return TranslatedResult(False, "\n".join(texts), attachments, structured)


def _content(blocks: object) -> tuple[list[str], list[McpAttachment]]:
    if not isinstance(blocks, list):
        raise _Rejected("its content is not a list")
    texts: list[str] = []
    attachments: list[McpAttachment] = []
    for index, block in enumerate(blocks, start=1):
        if not isinstance(block, dict):
            raise _Rejected(f"content block {index} is not an object")
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise _Rejected(f"text block {index} has no text")
            texts.append(text)
        elif kind in ("image", "audio"):
            mime_type = _mime(block.get("mimeType"), "application/octet-stream")
            data = _base64(block.get("data"), f"the {kind} in block {index}")
            name = f"{kind}-{index}{_extension(mime_type)}"
            attachments.append(McpAttachment(kind, mime_type, data, name))
            texts.append(f"[{kind} {name}: {mime_type}, {len(data):,} bytes]")
        elif kind == "resource":
            attachment = _embedded(block.get("resource"), index)
            attachments.append(attachment)
            texts.append(
                f"[resource {attachment.uri}: {attachment.mime_type}, {len(attachment.data):,} bytes]"
            )
        elif kind == "resource_link":
            texts.append(_link(block, index))
        else:
            texts.append(f"[content of type {kind!r} not shown]")
    return texts, attachments


def _embedded(resource: object, index: int) -> McpAttachment:
    if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
        raise _Rejected(f"the resource in block {index} has no URI")
    uri: str = resource["uri"]
    if isinstance(resource.get("text"), str):
        data = resource["text"].encode("utf-8")
        mime_type = _mime(resource.get("mimeType"), "text/plain")
    elif "blob" in resource:
        data = _base64(resource.get("blob"), f"the resource {uri}")
        mime_type = _mime(resource.get("mimeType"), "application/octet-stream")
    else:
        raise _Rejected(f"the resource {uri} has neither text nor blob")
    return McpAttachment("resource", mime_type, data, _file_name(uri, index, mime_type), uri=uri)


def _link(block: dict[str, Any], index: int) -> str:
    uri = block.get("uri")
    if not isinstance(uri, str):
        raise _Rejected(f"the resource link in block {index} has no URI")
    name = block.get("name")
    description = block.get("description")
    line = (
        f"[resource link: {name} <{uri}>]" if isinstance(name, str) and name else f"[resource link: <{uri}>]"
    )
    return f"{line} {description}" if isinstance(description, str) and description else line


def _base64(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise _Rejected(f"{what} has no data")
    try:
        # Line breaks (MIME-style wrapping) are tolerated; any other character outside the alphabet is not.
        return base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        raise _Rejected(f"{what} is not valid base64") from None


def _mime(value: object, fallback: str) -> str:
    return value if isinstance(value, str) and "/" in value and len(value) <= 255 else fallback


def _file_name(uri: str, index: int, mime_type: str) -> str:
    base = posixpath.basename(unquote(urlsplit(uri).path))
    safe = _UNSAFE_NAME.sub("_", base).strip("._")[:128]
    return safe or f"resource-{index}{_extension(mime_type)}"


def _check_structured(structured: dict[str, Any] | None, output_schema: dict[str, Any]) -> None:
    from jsonschema.exceptions import SchemaError

    from .manifest import validator_for

    if structured is None:
        raise _Rejected("the tool declares an output schema but returned no structured content")
    validator_class = validator_for(output_schema)
    if validator_class is None:
        raise _Rejected("the tool's output schema uses a JSON Schema dialect this client does not support")
    try:
        errors = sorted(
            validator_class(output_schema).iter_errors(structured), key=lambda e: list(e.absolute_path)
        )
    except (SchemaError, RecursionError):
        raise _Rejected("the tool's output schema cannot be applied") from None
    if errors:
        first = errors[0]
        where = "/".join(str(part) for part in first.absolute_path)
        detail = f"at {where}: {first.message}" if where else first.message
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise _Rejected(f"its structured content does not match the tool's output schema {detail}{more}")


def _extension(mime_type: str) -> str:
    return _EXTENSIONS.get(mime_type) or _MIME_TYPES.guess_extension(mime_type) or ""
