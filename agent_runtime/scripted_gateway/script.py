"""The script format: what the scripted gateway answers, turn by turn, validated on load.

A script is a JSON object ``{"turns": [...], "repeatLastTurn": false}`` (a bare list of turns is
shorthand for it). Each request to a model endpoint plays the next turn. A turn is one of:

``response`` (the default ``kind``)
    ``text`` streamed in chunks of ``chunkSize`` characters (or ``chunks``: the exact pieces);
    ``toolCalls``: ``[{"name", "arguments", "id"?, "argumentChunks"?, "rawArguments"?}]`` — each
    call's JSON arguments are streamed in ``argumentChunks`` fragments (``rawArguments`` sends this
    text verbatim instead, e.g. broken JSON); ``stopReason``: ``end_turn`` | ``stop_sequence`` |
    ``max_tokens`` | ``tool_use`` | ``content_filter`` (default ``tool_use`` when there are tool
    calls, else ``end_turn``); ``usage``: ``{"inputTokens", "outputTokens", "cacheReadTokens"?,
    "cacheWriteTokens"?}`` (default: estimated from the sizes, cache reads and writes from the
    gateway's prompt-cache model) or ``"omitUsage": true``; ``model`` (default: the requested one);
    ``delayMs`` before the answer and ``chunkDelayMs`` between chunks, or ``chunksPerSecond``: chunks
    paced to that rate by a schedule (a burst when behind, a sleep when a millisecond ahead), so rates
    beyond one chunk a millisecond are steady too;
    ``holdAfterChunks``: after that many chunks, wait until released (``ScriptedGateway.release()``
    or ``POST /_scripted/release``) — a barrier for tests;
    ``cutAfterChunks``: after that many chunks, drop the connection without ending the response;
    ``streamError``: ``{"afterChunks", "status", "message"?}`` — an error event mid-stream.
    "Chunks" count text chunks, then tool-call argument fragments, in the order they are sent.
``error``
    ``status`` (400–599), ``retryAfter`` (seconds, or an HTTP-date string), ``message``, ``body``
    (any JSON, replacing the dialect's error body), ``delayMs``.
``raw``
    ``status``, ``contentType``, ``headers``, and ``body`` or ``chunks`` sent byte for byte — for
    hostile streams; ``cut``: drop the connection instead of ending the response.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel

from contracts.validation import field_path

__all__ = [
    "ErrorTurn",
    "RawTurn",
    "ResponseTurn",
    "Script",
    "ScriptError",
    "ScriptedToolCall",
    "ScriptedUsage",
    "StreamError",
    "Turn",
    "load_script",
    "parse_script",
    "parse_turn",
]

MAX_DELAY_MS = 600_000
StopName = Literal["end_turn", "stop_sequence", "max_tokens", "tool_use", "content_filter"]


class ScriptError(ValueError):
    """The script is not valid; the message names the file and the field."""


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True, frozen=True
    )


class ScriptedUsage(_Model):
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)


class ScriptedToolCall(_Model):
    name: str = Field(min_length=1)
    id: str | None = Field(default=None, min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None
    argument_chunks: int = Field(default=3, ge=1, le=100_000)

    @model_validator(mode="after")
    def _one_kind_of_arguments(self) -> ScriptedToolCall:
        if self.raw_arguments is not None and self.arguments:
            raise ValueError("give arguments or rawArguments, not both")
        return self

    def arguments_text(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)


class StreamError(_Model):
    after_chunks: int = Field(default=0, ge=0)
    status: int = Field(default=529, ge=400, le=599)
    message: str | None = None


class ResponseTurn(_Model):
    kind: Literal["response"] = "response"
    text: str = ""
    chunks: list[str] | None = None
    chunk_size: int = Field(default=16, ge=1)
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    stop_reason: StopName | None = None
    usage: ScriptedUsage | None = None
    omit_usage: bool = False
    model: str | None = Field(default=None, min_length=1)
    delay_ms: int = Field(default=0, ge=0, le=MAX_DELAY_MS)
    chunk_delay_ms: int = Field(default=0, ge=0, le=MAX_DELAY_MS)
    chunks_per_second: float | None = Field(default=None, gt=0, le=1_000_000)
    hold_after_chunks: int | None = Field(default=None, ge=0)
    cut_after_chunks: int | None = Field(default=None, ge=0)
    stream_error: StreamError | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ResponseTurn:
        if self.chunks is not None and self.text:
            raise ValueError("give text or chunks, not both")
        if self.cut_after_chunks is not None and self.stream_error is not None:
            raise ValueError("a turn is cut or ends in a stream error, not both")
        if self.usage is not None and self.omit_usage:
            raise ValueError("give usage or omitUsage, not both")
        if self.chunks_per_second is not None and self.chunk_delay_ms:
            raise ValueError("give chunkDelayMs or chunksPerSecond, not both")
        return self

    def text_chunks(self) -> list[str]:
        if self.chunks is not None:
            return [chunk for chunk in self.chunks if chunk]
        size = self.chunk_size
        return [self.text[i : i + size] for i in range(0, len(self.text), size)]

    def full_text(self) -> str:
        return "".join(self.chunks) if self.chunks is not None else self.text


class ErrorTurn(_Model):
    kind: Literal["error"]
    status: int = Field(ge=400, le=599)
    retry_after: float | str | None = None
    message: str | None = None
    body: Any = None
    delay_ms: int = Field(default=0, ge=0, le=MAX_DELAY_MS)

    @model_validator(mode="after")
    def _retry_after(self) -> ErrorTurn:
        if isinstance(self.retry_after, float) and self.retry_after < 0:
            raise ValueError("retryAfter must not be negative")
        return self


class RawTurn(_Model):
    kind: Literal["raw"]
    status: int = Field(default=200, ge=200, le=599)
    content_type: str = "text/event-stream"
    headers: dict[str, str] = Field(default_factory=dict)
    body: str = ""
    chunks: list[str] | None = None
    cut: bool = False
    delay_ms: int = Field(default=0, ge=0, le=MAX_DELAY_MS)

    @model_validator(mode="after")
    def _one_body(self) -> RawTurn:
        if self.chunks is not None and self.body:
            raise ValueError("give body or chunks, not both")
        for name, value in self.headers.items():
            if any(ch in name + value for ch in "\r\n\0") or not name:
                raise ValueError("header names and values must be single lines")
        return self

    def pieces(self) -> list[bytes]:
        texts = self.chunks if self.chunks is not None else [self.body]
        return [text.encode() for text in texts if text]


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("kind", "response")
        return kind if isinstance(kind, str) else ""
    return getattr(value, "kind", "")


Turn = Annotated[
    Annotated[ResponseTurn, Tag("response")]
    | Annotated[ErrorTurn, Tag("error")]
    | Annotated[RawTurn, Tag("raw")],
    Discriminator(_kind),
]


class Script(_Model):
    turns: list[Turn]
    repeat_last_turn: bool = False

    @model_validator(mode="after")
    def _repeatable(self) -> Script:
        if self.repeat_last_turn and not self.turns:
            raise ValueError("repeatLastTurn needs at least one turn")
        return self


def parse_script(data: Any, source: str = "script") -> Script:
    """Validate a script given as JSON-shaped Python data (``list`` of turns, or the object form)."""
    if isinstance(data, list):
        data = {"turns": data}
    try:
        return Script.model_validate_json(json.dumps(data))
    except ValidationError as exc:
        raise ScriptError(_describe(exc, source)) from None
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"{source}: not JSON data ({exc})") from None


_TURN: TypeAdapter[ResponseTurn | ErrorTurn | RawTurn] = TypeAdapter(Turn)


def parse_turn(data: Any, source: str = "turn") -> ResponseTurn | ErrorTurn | RawTurn:
    """Validate one turn given as JSON-shaped Python data (a responder's answer, see ``ScriptedGateway``)."""
    if isinstance(data, ResponseTurn | ErrorTurn | RawTurn):
        return data
    try:
        return _TURN.validate_json(json.dumps(data))
    except ValidationError as exc:
        raise ScriptError(_describe(exc, source)) from None
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"{source}: not JSON data ({exc})") from None


def load_script(path: str | Path) -> Script:
    """Read and validate a script file; every problem is a :class:`ScriptError` naming file and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read the script ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ScriptError(f"{path}: the script is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScriptError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    return parse_script(data, str(path))


def _describe(exc: ValidationError, source: str) -> str:
    problems = []
    for error in exc.errors(include_url=False, include_input=False)[:5]:
        # Tagged unions put the tag in the location ("turns.0.response.text"): leave it out.
        loc = tuple(part for part in error["loc"] if part not in ("response", "error", "raw"))
        kind = error["type"]
        if kind == "union_tag_invalid":
            message = "kind must be one of response, error, raw"
        elif kind == "value_error":
            message = str((error.get("ctx") or {}).get("error", error["msg"]))
        else:
            message = error["msg"]
        problems.append(f"{field_path(loc)}: {message}")
    return f"{source}: " + "; ".join(problems)
