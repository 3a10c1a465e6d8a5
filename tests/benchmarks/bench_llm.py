"""Benchmark of the LLM client's streaming, against the scripted gateway on loopback.

The gateway runs as its own process (``python -m agent_runtime.scripted_gateway``), so its work does
not share the client's event loop. Measures, each the median of ``--runs`` runs:

* chunks/s through the whole client, per dialect: one streamed response of ``--chunks`` text chunks,
  from ``LlmClient.stream`` being called to its return, every chunk delivered to ``on_text``;
* chunks/s through the client's decoder and dialect parser alone, on the same bytes already in
  memory (no network): the client's own ceiling;
* a one-chunk call's round trip (p50), new connection included (one connection per call, §6.1).

Run: ``.venv/bin/python -m tests.benchmarks.bench_llm`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx

from agent_runtime.agent_host.llm import Dialect, GatewayConfig, LlmClient
from agent_runtime.agent_host.llm.anthropic import AnthropicStream
from agent_runtime.agent_host.llm.openai import OpenAiStream
from agent_runtime.agent_host.llm.sse import SseDecoder
from agent_runtime.agent_host.llm.streaming import StreamParser
from contracts.enums import Role
from contracts.ipc import eventloop
from contracts.messages import ConversationMessage
from contracts.policy import LlmPolicy
from tests.benchmarks.figures import Targets, percentile, report

REPO = Path(__file__).resolve().parents[2]
DIALECTS: tuple[Dialect, ...] = ("anthropic", "openai")
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}

TARGETS: Targets = {
    "anthropic_chunks_per_s": ("anthropic: streamed chunks/s, whole client", "/s", ">=", 10_000.0),
    "openai_chunks_per_s": ("openai: streamed chunks/s, whole client", "/s", ">=", 10_000.0),
    "anthropic_parse_per_s": ("anthropic: chunks/s, decoder + parser only", "/s", None, None),
    "openai_parse_per_s": ("openai: chunks/s, decoder + parser only", "/s", None, None),
    "anthropic_call_p50_ms": ("anthropic: one-chunk call round trip p50", "ms", None, None),
    "openai_call_p50_ms": ("openai: one-chunk call round trip p50", "ms", None, None),
}

POLICY = LlmPolicy(
    allowed_models=["bench-model"], max_input_tokens=10**6, max_output_tokens=10**6, max_session_tokens=10**9
)
MESSAGES = [
    ConversationMessage(
        message_id="m1", session_id="bench", role=Role.USER, content="Go.", timestamp=datetime.now(UTC)
    )
]


async def start_gateway(script: Path) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agent_runtime.scripted_gateway",
        "--script",
        str(script),
        "--port",
        "0",
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    async with asyncio.timeout(30):
        line = (await process.stdout.readline()).decode().strip()
    if not line.startswith("Scripted LLM gateway"):
        raise RuntimeError(f"the gateway did not start: {line!r}")
    return process, line.rsplit(" ", 1)[-1]


def parser_for(dialect: Dialect) -> StreamParser:
    if dialect == "anthropic":
        return AnthropicStream(now=time.time)
    return OpenAiStream(now=time.time)


def parse_only(raw: bytes, dialect: Dialect, piece: int = 16 * 1024) -> int:
    decoder = SseDecoder()
    parser = parser_for(dialect)
    count = 0
    for start in range(0, len(raw), piece):
        for event in decoder.feed(raw[start : start + piece]):
            if parser.event(event) is not None:
                count += 1
    parser.outcome()
    return count


async def measure(chunks: int, runs: int, calls: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.json"
        big.write_text(
            json.dumps({"turns": [{"text": "tok " * chunks, "chunkSize": 4}], "repeatLastTurn": True})
        )
        small = Path(tmp) / "small.json"
        small.write_text(json.dumps({"turns": [{"text": "ok"}], "repeatLastTurn": True}))
        for dialect in DIALECTS:
            process, url = await start_gateway(big)
            try:
                llm = LlmClient(GatewayConfig(url, None, dialect))
                received = 0

                def count(_chunk: str) -> None:
                    nonlocal received
                    received += 1

                rates = []
                for _ in range(runs + 1):  # the first run warms up and is not counted
                    received = 0
                    started = time.perf_counter()
                    await llm.stream(
                        policy=POLICY, system_prompt="", messages=MESSAGES, tools=[], on_text=count
                    )
                    elapsed = time.perf_counter() - started
                    if received != chunks:
                        raise RuntimeError(f"expected {chunks} chunks, got {received}")
                    rates.append(chunks / elapsed)
                figures[f"{dialect}_chunks_per_s"] = statistics.median(rates[1:])
                raw = await raw_stream(url, dialect, llm)
            finally:
                process.terminate()
                await process.wait()
            figures[f"{dialect}_parse_per_s"] = statistics.median(
                _rate(lambda raw=raw, dialect=dialect: parse_only(raw, dialect), chunks) for _ in range(runs)
            )
            process, url = await start_gateway(small)
            try:
                llm = LlmClient(GatewayConfig(url, None, dialect))
                samples = []
                for _ in range(calls + 1):
                    started = time.perf_counter()
                    await llm.stream(policy=POLICY, system_prompt="", messages=MESSAGES, tools=[])
                    samples.append(time.perf_counter() - started)
                figures[f"{dialect}_call_p50_ms"] = percentile(samples[1:], 0.5) * 1000
            finally:
                process.terminate()
                await process.wait()
    return figures


async def raw_stream(url: str, dialect: Dialect, llm: LlmClient) -> bytes:
    """The bytes the gateway streams for the big turn, exactly as the client receives them."""
    body = llm.build_body(policy=POLICY, system_prompt="", messages=MESSAGES, tools=[])
    async with httpx.AsyncClient(timeout=60) as http:
        response = await http.post(url + PATHS[dialect], json=body)
    return response.content


def _rate(run: Callable[[], int], expected: int) -> float:
    started = time.perf_counter()
    count = run()
    elapsed = time.perf_counter() - started
    if count != expected:
        raise RuntimeError(f"expected {expected} chunks, parsed {count}")
    return count / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=50_000, help="text chunks in the streamed response")
    parser.add_argument("--runs", type=int, default=5, help="runs per measure (median reported)")
    parser.add_argument("--calls", type=int, default=50, help="one-chunk calls for the round-trip figure")
    args = parser.parse_args(argv)
    if args.chunks < 1 or args.runs < 1 or args.calls < 1:
        parser.error("--chunks, --runs and --calls must be at least 1")
    sizes = f"{args.chunks:,} chunks per response, {args.runs} runs, {args.calls} calls"
    print(f"Cowork LLM client benchmark: {sizes}")
    figures = eventloop.run(measure(args.chunks, args.runs, args.calls))
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
