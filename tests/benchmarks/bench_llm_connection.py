"""A new connection per LLM call (seed 000 §6.1) against one kept alive, over TLS on loopback.

The scripted gateway runs as its own process serving HTTPS with a certificate it makes at start
(``--tls``); the client trusts exactly that certificate. Each "step" is what the agent loop does per
step on the wire: one streamed call through ``LlmClient.stream`` — a 20-message conversation and the
built-in tool definitions up, a tool call back — after ``--gap-ms`` of simulated tool work. Per mode,
the median over ``--steps`` steps of each of ``--runs`` runs (the first call of a run, which opens a
connection either way, is left out):

* **fresh**: a new connection, and a TLS handshake, for every call (``keep_alive_s=0``);
* **kept**: one connection kept between calls (``keep_alive_s`` of the runtime).

The same over plain HTTP shows what is left when no handshake is involved, and the gateway's record
of client ports counts the connections each mode opened. ``docs/decisions/0001-llm-connection-reuse.md``
records the figures.

Run: ``.venv/bin/python -m tests.benchmarks.bench_llm_connection`` (``--help`` for sizes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from agent_runtime.agent_host.llm import GatewayConfig, LlmClient
from agent_runtime.agent_host.llm.config import KEEP_ALIVE_S
from contracts.enums import Role, ToolStatus
from contracts.ipc import eventloop
from contracts.messages import ConversationMessage
from contracts.policy import LlmPolicy
from contracts.tools import ToolCall, ToolDefinition
from tests.benchmarks.figures import Targets, report

REPO = Path(__file__).resolve().parents[2]

TARGETS: Targets = {
    "tls_fresh_ms": ("TLS: per step, new connection per call (median)", "ms", None, None),
    "tls_kept_ms": ("TLS: per step, connection kept alive (median)", "ms", None, None),
    "tls_saved_ms": ("TLS: saved per step by keeping it", "ms", None, None),
    "tls_fresh_connections": ("TLS: connections opened, new per call", "", None, None),
    "tls_kept_connections": ("TLS: connections opened, kept alive", "", None, None),
    "plain_fresh_ms": ("plain HTTP: per step, new connection per call (median)", "ms", None, None),
    "plain_kept_ms": ("plain HTTP: per step, connection kept alive (median)", "ms", None, None),
}

POLICY = LlmPolicy(
    allowed_models=["bench-model"], max_input_tokens=10**6, max_output_tokens=4096, max_session_tokens=10**9
)
SYSTEM = "You are a careful coding agent working in the user's project folder. " * 20
ANSWER = {
    "toolCalls": [{"id": "call_next", "name": "ReadFile", "arguments": {"path": "/project/notes.txt"}}],
    "usage": {"inputTokens": 2000, "outputTokens": 30},
}


def conversation(messages: int = 20) -> list[ConversationMessage]:
    """A prompt, then steps of a ReadFile call and its result."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    thread = [
        ConversationMessage(
            message_id="m0", session_id="bench", role=Role.USER, content="Tidy the notes.", timestamp=start
        )
    ]
    step = 0
    while len(thread) < messages:
        step += 1
        moment = start + timedelta(seconds=step)
        call = ToolCall(tool_call_id=f"call_{step}", tool_name="ReadFile", arguments={"path": f"/p/{step}"})
        thread.append(
            ConversationMessage(
                message_id=f"a{step}",
                session_id="bench",
                role=Role.ASSISTANT,
                content="Reading the next file.",
                tool_calls=[call],
                timestamp=moment,
            )
        )
        thread.append(
            ConversationMessage(
                message_id=f"r{step}",
                session_id="bench",
                role=Role.TOOL,
                content="line of the file\n" * 40,
                tool_call_id=call.tool_call_id,
                tool_name="ReadFile",
                tool_status=ToolStatus.SUCCEEDED,
                timestamp=moment,
            )
        )
    return thread[:messages]


def tools() -> list[ToolDefinition]:
    from agent_runtime.tool_runtime import LocalToolRouter

    return LocalToolRouter().get_available_tools()


async def start_gateway(script: Path, cert: Path | None) -> tuple[asyncio.subprocess.Process, str]:
    tls = ["--tls", "--tls-cert-out", str(cert)] if cert is not None else []
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "agent_runtime.scripted_gateway", "--script", str(script), *tls),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    async with asyncio.timeout(30):
        line = (await process.stdout.readline()).decode().strip()
    if not line.startswith("Scripted LLM gateway"):
        raise RuntimeError(f"the gateway did not start: {line!r}")
    return process, line.rsplit(" ", 1)[-1]


async def run_steps(client: LlmClient, steps: int, gap_s: float) -> list[float]:
    """Each call's time, first one included."""
    thread = conversation()
    definitions = tools()
    samples = []
    for _ in range(steps + 1):
        started = time.perf_counter()
        response = await client.stream(
            policy=POLICY, system_prompt=SYSTEM, messages=thread, tools=definitions
        )
        samples.append(time.perf_counter() - started)
        if not response.tool_calls:
            raise RuntimeError("the gateway did not answer with the scripted tool call")
        await asyncio.sleep(gap_s)
    return samples


async def connections(url: str, context: ssl.SSLContext | bool) -> set[int]:
    async with httpx.AsyncClient(verify=context, timeout=30) as http:
        recorded = (await http.get(url + "/_scripted/requests")).json()["requests"]
    return {request["clientPort"] for request in recorded}


async def measure(steps: int, runs: int, gap_ms: float) -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        script = root / "script.json"
        script.write_text(json.dumps({"turns": [ANSWER], "repeatLastTurn": True}))
        for scheme in ("tls", "plain"):
            cert = root / "gateway.pem" if scheme == "tls" else None
            for mode, keep_alive in (("fresh", 0.0), ("kept", KEEP_ALIVE_S)):
                per_step: list[float] = []
                opened: list[int] = []
                for _ in range(runs):
                    process, url = await start_gateway(script, cert)
                    context: ssl.SSLContext | bool = (
                        ssl.create_default_context(cafile=str(cert)) if cert is not None else False
                    )
                    try:
                        client = LlmClient(
                            GatewayConfig(url, None, "anthropic", model="bench-model"),
                            keep_alive_s=keep_alive,
                            tls=context if isinstance(context, ssl.SSLContext) else None,
                        )
                        try:
                            samples = await run_steps(client, steps, gap_ms / 1000)
                        finally:
                            await client.aclose()
                        per_step += samples[1:]
                        opened.append(len(await connections(url, context)))
                    finally:
                        process.terminate()
                        await process.wait()
                figures[f"{scheme}_{mode}_ms"] = statistics.median(per_step) * 1000
                if scheme == "tls":
                    figures[f"tls_{mode}_connections"] = statistics.median(opened)
        figures["tls_saved_ms"] = figures["tls_fresh_ms"] - figures["tls_kept_ms"]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=40, help="calls per run after the first")
    parser.add_argument("--runs", type=int, default=3, help="runs per mode (a new gateway each)")
    parser.add_argument("--gap-ms", type=float, default=2.0, help="simulated tool time between calls")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.runs < 1 or args.gap_ms < 0:
        parser.error("--steps and --runs must be at least 1, --gap-ms not negative")
    print(
        f"LLM connection benchmark: {args.runs} runs of {args.steps} steps, {args.gap_ms:g} ms between"
        f" calls, keep-alive {KEEP_ALIVE_S:g} s"
    )
    print(report(eventloop.run(measure(args.steps, args.runs, args.gap_ms)), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
