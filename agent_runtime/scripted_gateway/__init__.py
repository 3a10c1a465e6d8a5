"""The scripted LLM gateway: a real HTTP server that plays a script of model turns over SSE in the
Anthropic Messages and OpenAI Chat Completions dialects. It stands in for the external LLM gateway in
tests and benchmarks, and is the desktop's clearly labelled offline demo model.

It is its own program (``python -m agent_runtime.scripted_gateway``) and imports nothing of the agent
host or the tool runtime.

Design
------
* **Script** (:mod:`.script`): a JSON list of turns, one per request, validated on load (pydantic;
  errors name the file and the field). A turn is a streamed ``response`` (chunked text, several tool
  calls with arguments in fragments, stop reason, usage, delays, a hold, a cut, an error event
  mid-stream), an HTTP ``error`` (429 with ``Retry-After``, 500, 400 guardrail, 401…), or ``raw``
  bytes for hostile streams. A request beyond the script gets a 500 saying the script ran out,
  unless ``repeatLastTurn`` is set.
* **Both dialects from one script**: ``POST /v1/messages`` answers in Anthropic's events,
  ``POST /v1/chat/completions`` in OpenAI's chunks (:mod:`.dialects`).
* **Recording**: every request (method, path, headers with secrets redacted, JSON body, the turn it
  got, how it ended: completed, error, cut, disconnected…) — in process as ``gateway.requests``, out
  of process as ``GET /_scripted/requests``. ``GET /_scripted/state`` and ``assert_done()`` report
  unplayed turns and overruns. ``--token`` makes every route require the token (401 otherwise, in
  the dialect's error format).
* **Responder** (``ScriptedGateway(None, responder=fn)``): instead of a script, a function of the
  request picks each turn — for tests whose answer depends on what the client sends.
* **Demo model** (:mod:`.demo`, ``--demo``): labels every reply as the offline demo model, never runs
  out; for a prompt naming a file it reads that file, edits a demo file of its own in the project
  folder (``WriteFile`` then ``EditFile``) and runs one ``echo`` command, one call per turn.
* **Serving** (:mod:`.server`, :mod:`.app`): plain ASGI on uvicorn; concurrent requests each get the
  next turn in arrival order. ``async with ScriptedGateway(script) as gateway`` in an event loop,
  ``with ScriptedGatewayThread(script) as gateway`` for synchronous code, or the CLI (:mod:`.cli`).
"""

from __future__ import annotations

from .demo import DEMO_LABEL
from .script import (
    ErrorTurn,
    RawTurn,
    ResponseTurn,
    Script,
    ScriptedToolCall,
    ScriptedUsage,
    ScriptError,
    StreamError,
    load_script,
    parse_script,
    parse_turn,
)
from .server import ScriptedGateway, ScriptedGatewayThread
from .state import RecordedRequest, Responder

__all__ = [
    "DEMO_LABEL",
    "ErrorTurn",
    "RawTurn",
    "RecordedRequest",
    "Responder",
    "ResponseTurn",
    "Script",
    "ScriptError",
    "ScriptedGateway",
    "ScriptedGatewayThread",
    "ScriptedToolCall",
    "ScriptedUsage",
    "StreamError",
    "load_script",
    "parse_script",
    "parse_turn",
]
