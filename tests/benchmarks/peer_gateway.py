"""Zero-latency scripted models for other coding agents, each in its own API and tool vocabulary.

``bench_peers`` drives Claude Code and OpenAI's Codex CLI through the same task ``cowork exec`` runs
in ``bench_exec``: ``steps - 1`` tool steps cycling write a file → read it back → run ``echo step-N``,
then a final text answer. The model is this gateway, on loopback, answering at once:

* ``anthropic``: the Anthropic Messages API (``POST /v1/messages``, streamed as the scripted gateway
  streams it; ``/v1/messages/count_tokens``), with Claude Code's tools ``Write``, ``Read``, ``Bash``;
* ``responses``: the OpenAI Responses API (``POST /v1/responses``, ``/responses``), with Codex's
  ``apply_patch`` for the write and its shell tool for the read (``cat``) and the command.

Which step to play is read from the request itself — the number of tool results it carries — so a
retried request replays its step instead of skipping one. Only main-loop requests play the script:
those offering the agent's tools (the shell tool). Everything else the peers send — title or topic
prompts, quota probes, token counts, model lists — is a *side* request, answered briefly and kept
out of the step figures.

Every request is recorded (``GET /_peer/requests``): when its head arrived and when the last byte of
its answer was handed to the connection (``time.time()``, like the scripted gateway's
``/_scripted/requests``), whether it was main or side, which step it played, and the tool result it
brought back for the previous step, checked against what that step must have produced.

Run: ``python -m tests.benchmarks.peer_gateway --dialect anthropic --steps 20 --workspace DIR``; the
first line printed ends with the URL.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from pydantic.alias_generators import to_camel

from agent_runtime.scripted_gateway.dialects import plan, response_steps
from agent_runtime.scripted_gateway.script import ResponseTurn, parse_turn

Dialect = Literal["anthropic", "responses"]
StepKind = Literal["write", "read", "command"]
KINDS: tuple[StepKind, ...] = ("write", "read", "command")
FINAL_TEXT = "Done."
SIDE_TEXT = "Benchmark run"
_RESULT_CHARS = 300


@dataclass(frozen=True)
class Step:
    """One tool step of the task, independent of the API that carries it."""

    index: int
    kind: StepKind
    path: Path
    """The file written (write) or read back (read); unused for a command."""
    content: str
    command: str

    @property
    def expected(self) -> str | None:
        """What the tool's result must contain: a write reports success in the agent's own words."""
        if self.kind == "read":
            return self.content.strip()
        if self.kind == "command":
            return f"step-{self.index}"
        return None


def task_steps(workspace: Path, steps: int, run: int = 0) -> list[Step]:
    """The ``steps - 1`` tool steps: a new file written, the same file read back, a command run. The
    files are named for the run: an agent may refuse to overwrite a file it has not read."""
    planned: list[Step] = []
    for index in range(steps - 1):
        kind = KINDS[index % len(KINDS)]
        written = index - index % len(KINDS)
        path = workspace / f"peer_{run}_step_{written}.txt"
        planned.append(Step(index, kind, path, f"step {written} content\n", f"echo step-{index}"))
    return planned


@dataclass
class Record:
    index: int
    method: str
    path: str
    kind: Literal["main", "side", "control"]
    received_at: float
    completed_at: float | None = None
    model: str | None = None
    turn: int | None = None
    """The step played (``steps - 1``: the final answer); ``None`` for a side request."""
    played: str | None = None
    """What the turn asked for: a step's kind, or ``final``."""
    tool_results: int = 0
    last_result: str | None = None
    last_result_ok: bool | None = None
    """Whether the result of the previous step holds what that step must have produced."""
    tools: list[str] = field(default_factory=list)
    status: int = 200

    def to_json(self) -> dict[str, Any]:
        """camelCase keys, as the scripted gateway's ``/_scripted/requests`` has them."""
        return {to_camel(name): value for name, value in asdict(self).items()}


class PeerScript:
    """The task in one API's vocabulary, and the record of what the peer asked for."""

    def __init__(self, dialect: Dialect, workspace: Path, steps: int, run: int = 0) -> None:
        if steps < 2:
            raise ValueError("a task needs at least one tool step and the final answer (steps >= 2)")
        self.dialect: Dialect = dialect
        self.steps = task_steps(workspace, steps, run)
        self.records: list[Record] = []
        self._lock = threading.Lock()

    def record(self, method: str, path: str, received_at: float) -> Record:
        with self._lock:
            entry = Record(len(self.records), method, path, "side", received_at)
            self.records.append(entry)
            return entry

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"dialect": self.dialect, "requests": [r.to_json() for r in self.records]}

    def check_result(self, entry: Record, results: list[tuple[str, bool]]) -> None:
        """Note the tool results the request carries and check the latest against its step."""
        entry.tool_results = len(results)
        if not results:
            return
        text, failed = results[-1]
        entry.last_result = text[:_RESULT_CHARS]
        step = self.steps[len(results) - 1] if len(results) <= len(self.steps) else None
        expected = step.expected if step is not None else None
        entry.last_result_ok = step is not None and not failed and (expected is None or expected in text)


def _text_of(content: Any) -> str:
    """The text in a tool result's content: a string, or blocks/parts carrying ``text``/``output``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "output", "content"):
            if key in content:
                return _text_of(content[key])
    return ""


# --- Anthropic Messages (Claude Code) ---------------------------------------------------------


def _anthropic_tools(body: dict[str, Any]) -> list[str]:
    return [str(tool.get("name")) for tool in body.get("tools") or [] if isinstance(tool, dict)]


def _anthropic_results(body: dict[str, Any]) -> list[tuple[str, bool]]:
    results = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append((_text_of(block.get("content")), bool(block.get("is_error"))))
    return results


def _anthropic_call(step: Step, turn: int) -> dict[str, Any]:
    if step.kind == "write":
        name, arguments = "Write", {"file_path": str(step.path), "content": step.content}
    elif step.kind == "read":
        name, arguments = "Read", {"file_path": str(step.path)}
    else:
        name, arguments = "Bash", {"command": step.command, "description": "Print the step number"}
    return {"id": f"toolu_peer_{turn:03d}", "name": name, "arguments": arguments}


def anthropic_answer(script: PeerScript, entry: Record, body: dict[str, Any]) -> tuple[str, bytes]:
    """(content type, body) of the answer to a Messages request: a step, the final text or a side
    answer, streamed when the request asks for a stream."""
    entry.model = str(body.get("model"))
    entry.tools = _anthropic_tools(body)
    if "Bash" in entry.tools:
        entry.kind = "main"
        results = _anthropic_results(body)
        script.check_result(entry, results)
        entry.turn = len(results)
        if entry.turn < len(script.steps):
            step = script.steps[entry.turn]
            entry.played = step.kind
            turn = parse_turn({"toolCalls": [_anthropic_call(step, entry.turn)]})
        else:
            entry.played = "final"
            turn = parse_turn({"text": FINAL_TEXT})
    else:
        turn = parse_turn({"text": SIDE_TEXT})
    assert isinstance(turn, ResponseTurn)
    played = plan("anthropic", turn, entry.index, body, len(json.dumps(body)))
    if body.get("stream"):
        head, tail = response_steps("anthropic", played)
        return "text/event-stream", b"".join(step.data for step in [*head, *tail])
    content: list[dict[str, Any]] = [{"type": "text", "text": turn.full_text()}] if turn.full_text() else []
    content += [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in turn.tool_calls
    ]
    message = {
        "id": f"msg_peer_{entry.index}",
        "type": "message",
        "role": "assistant",
        "model": played.model,
        "content": content,
        "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": played.input_tokens, "output_tokens": played.output_tokens},
    }
    return "application/json", json.dumps(message).encode()


# --- OpenAI Responses (Codex) -----------------------------------------------------------------

SHELL_TOOLS = ("shell_command", "exec_command", "shell", "local_shell")
"""Codex's shell tool under the names its versions use, the preferred first."""


def _responses_tools(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            names.append(str(tool.get("name") or tool.get("type")))
    return names


def _responses_results(body: dict[str, Any]) -> list[tuple[str, bool]]:
    results = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            text = _text_of(output)
            failed = False
            if isinstance(output, dict) and output.get("success") is False:
                failed = True
            results.append((text, failed))
    return results


def _shell_call(tools: list[str], command: str, call_id: str) -> dict[str, Any]:
    name = next((tool for tool in SHELL_TOOLS if tool in tools), "shell")
    if name == "shell_command":
        arguments: dict[str, Any] = {"command": command}
    elif name == "exec_command":
        arguments = {"cmd": command}
    else:
        arguments = {"command": ["bash", "-lc", command]}
    if name == "local_shell":
        action = {"type": "exec", "command": ["bash", "-lc", command]}
        return {"type": "local_shell_call", "call_id": call_id, "status": "completed", "action": action}
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call_id}


def _patch_call(body: dict[str, Any], step: Step, call_id: str) -> dict[str, Any]:
    patch = (
        f"*** Begin Patch\n*** Add File: {step.path}\n"
        + "".join(f"+{line}\n" for line in step.content.splitlines())
        + "*** End Patch"
    )
    custom = any(
        isinstance(tool, dict) and tool.get("name") == "apply_patch" and tool.get("type") == "custom"
        for tool in body.get("tools") or []
    )
    if custom:
        return {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": call_id}
    return {
        "type": "function_call",
        "name": "apply_patch",
        "arguments": json.dumps({"input": patch}),
        "call_id": call_id,
    }


def _responses_item(body: dict[str, Any], tools: list[str], step: Step, turn: int) -> dict[str, Any]:
    call_id = f"call_peer_{turn:03d}"
    if step.kind == "write" and "apply_patch" in tools:
        return _patch_call(body, step, call_id)
    if step.kind == "write":
        command = f"printf %s {json.dumps(step.content)} > {step.path}"
    elif step.kind == "read":
        command = f"cat {step.path}"
    else:
        command = step.command
    return _shell_call(tools, command, call_id)


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def responses_answer(script: PeerScript, entry: Record, body: dict[str, Any]) -> tuple[str, bytes]:
    """(content type, body) of the answer to a Responses request, streamed as the API streams it:
    ``response.created``, each output item added and done, ``response.completed`` with usage."""
    entry.model = str(body.get("model"))
    entry.tools = _responses_tools(body)
    item: dict[str, Any]
    if any(tool in entry.tools for tool in SHELL_TOOLS):
        entry.kind = "main"
        results = _responses_results(body)
        script.check_result(entry, results)
        entry.turn = len(results)
        if entry.turn < len(script.steps):
            step = script.steps[entry.turn]
            entry.played = step.kind
            item = _responses_item(body, entry.tools, step, entry.turn)
        else:
            entry.played = "final"
            item = _message(FINAL_TEXT, entry.index)
    else:
        item = _message(SIDE_TEXT, entry.index)
    response_id = f"resp_peer_{entry.index}"
    size = len(json.dumps(body)) // 4
    response: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": entry.model,
        "output": [],
    }
    done = {
        **response,
        "status": "completed",
        "output": [item],
        "usage": {
            "input_tokens": size,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 16,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": size + 16,
        },
    }
    events = [
        {"type": "response.created", "sequence_number": 0, "response": response},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
        {"type": "response.output_item.done", "sequence_number": 2, "output_index": 0, "item": item},
        {"type": "response.completed", "sequence_number": 3, "response": done},
    ]
    if body.get("stream") is False:
        return "application/json", json.dumps(done).encode()
    return "text/event-stream", _sse(events)


def _message(text: str, index: int) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_peer_{index}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


# --- the HTTP server --------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # kept-alive connections, as the peers use them with a real API
    # TCP_NODELAY: with Nagle's algorithm a small write waits for the client's delayed ACK of the one
    # before — 40 ms added to every answer, which the step figures would blame on the peer.
    disable_nagle_algorithm = True
    server: PeerServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the record is the log."""

    def do_GET(self) -> None:
        received = time.time()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/_peer/requests":
            self._send(200, "application/json", json.dumps(self.server.script.snapshot()).encode())
            return
        entry = self.server.script.record("GET", path, received)
        if path.endswith("/models"):
            # Both vocabularies at once: OpenAI's list and Codex's own ``models`` key, each empty,
            # so the peer keeps the models it knows.
            self._finish(entry, 200, "application/json", b'{"object":"list","data":[],"models":[]}')
        else:
            self._finish(entry, 404, "application/json", _not_found(path))

    def do_HEAD(self) -> None:
        received = time.time()
        entry = self.server.script.record("HEAD", self.path, received)
        self._finish(entry, 200, "text/plain", b"")

    def do_POST(self) -> None:
        received = time.time()
        path = self.path.split("?", 1)[0].rstrip("/")
        script = self.server.script
        entry = script.record("POST", path, received)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else self._chunked_body()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._finish(entry, 400, "application/json", b'{"error":{"message":"the body is not JSON"}}')
            return
        if not isinstance(body, dict):
            self._finish(entry, 400, "application/json", b'{"error":{"message":"the body is not an object"}}')
            return
        if path.endswith("/messages/count_tokens"):
            tokens = max(1, len(raw) // 4)
            self._finish(entry, 200, "application/json", json.dumps({"input_tokens": tokens}).encode())
        elif path.endswith("/messages") and script.dialect == "anthropic":
            self._finish(entry, 200, *anthropic_answer(script, entry, body))
        elif path.endswith("/responses") and script.dialect == "responses":
            self._finish(entry, 200, *responses_answer(script, entry, body))
        else:
            self._finish(entry, 404, "application/json", _not_found(path))

    def _chunked_body(self) -> bytes:
        if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
            return b""
        parts: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline()

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        """The head and the body in one write: the whole answer leaves at once, as zero latency means."""
        extra = "Cache-Control: no-cache\r\n" if content_type == "text/event-stream" else ""
        head = (
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(payload)}\r\n{extra}\r\n"
        )
        self.wfile.write(head.encode("latin-1") + payload)
        self.wfile.flush()

    def _finish(self, entry: Record, status: int, content_type: str, payload: bytes) -> None:
        entry.status = status
        self._send(status, content_type, payload)
        entry.completed_at = time.time()


def _not_found(path: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": "not_found_error", "message": path[:200]}}).encode()


class PeerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: PeerScript, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__((host, port), _Handler)
        self.script = script

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dialect", choices=("anthropic", "responses"), required=True)
    parser.add_argument("--steps", type=int, default=20, help="steps of the task (the last one answers)")
    parser.add_argument("--workspace", type=Path, required=True, help="the folder the files are written in")
    parser.add_argument("--run", type=int, default=0, help="the run number, in the files' names")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("--steps must be at least 2")
    server = PeerServer(
        PeerScript(args.dialect, args.workspace.resolve(), args.steps, args.run), port=args.port
    )
    print(f"peer gateway ({args.dialect}) listening on {server.url}", flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
