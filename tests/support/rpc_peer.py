"""A runtime-side test peer: the real JSON-RPC server code serving test methods in its own process.

It serves the examples of the JSON-RPC 2.0 specification (``subtract``, ``sum``, ``get_data``, …) and a
few methods for misbehaviour and benchmarks. Run as::

    COWORK_RPC_SECRET=... python -m tests.support.rpc_peer --connect NAME
    python -m tests.support.rpc_peer --stdio
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from agent_runtime.agent_host.session.rpc import (
    Dispatcher,
    InvalidParams,
    RpcConnection,
    connect_to_desktop,
    open_stdio,
)
from contracts._base import WireModel
from contracts.errors import CoworkError, ErrorCode
from contracts.ipc import eventloop
from contracts.ipc.handshake import HandshakeError, take_secret


class Mode(StrEnum):
    ALWAYS = "always"
    ON_RISKY_ACTIONS = "on_risky_actions"
    NEVER = "never"


class Options(WireModel):
    max_steps: int = Field(ge=1, le=1000)
    approval_mode: Mode
    not_after: datetime | None = None


class EchoParams(WireModel):
    session_id: str = Field(min_length=1)
    task_options: Options


def build(connection_box: list[RpcConnection]) -> Dispatcher:
    dispatcher = Dispatcher()
    notes: list[Any] = []

    def numbers(params: Any) -> list[int]:
        if not isinstance(params, list) or not all(isinstance(n, int) for n in params):
            raise InvalidParams("params", "must be an array of integers")
        return params

    async def subtract(params: Any) -> int:
        if isinstance(params, dict):
            minuend, subtrahend = params.get("minuend"), params.get("subtrahend")
            if not isinstance(minuend, int) or not isinstance(subtrahend, int):
                raise InvalidParams("minuend", "and subtrahend must be integers")
            return minuend - subtrahend
        first, second = numbers(params)
        return first - second

    async def total(params: Any) -> int:
        return sum(numbers(params))

    async def record(params: Any) -> None:
        notes.append(params)

    async def get_data(_: Any) -> list[Any]:
        return ["hello", 5]

    async def noop(_: Any) -> None:
        return None

    async def emit(params: Any) -> int:
        count = int(params["count"])
        connection = connection_box[0]
        for seq in range(count):
            await connection.notify("SessionEvent", {"eventType": "text_chunk", "seq": seq, "text": "chunk"})
        return count

    async def sleep(params: Any) -> str:
        await asyncio.sleep(float(params["seconds"]))
        return "slept"

    async def echo(params: EchoParams) -> EchoParams:
        return params

    async def crash(_: Any) -> None:
        raise RuntimeError("secret internal detail /home/user/.ssh/id_rsa")

    async def fail(_: Any) -> None:
        raise CoworkError(ErrorCode.SESSION_NOT_FOUND, "No session sess_x", details={"sessionId": "sess_x"})

    async def big(params: Any) -> str:
        return "x" * int(params["size"])

    async def environment(_: Any) -> dict[str, Any]:
        return {"hasSecret": "COWORK_RPC_SECRET" in os.environ}

    async def stray_print(_: Any) -> str:
        print("a stray print that must not corrupt the frame stream")
        return "printed"

    for name, handler in {
        "subtract": subtract,
        "sum": total,
        "update": record,
        "notify_hello": record,
        "notify_sum": record,
        "get_data": get_data,
        "noop": noop,
        "emit": emit,
        "sleep": sleep,
        "crash": crash,
        "fail": fail,
        "big": big,
        "environment": environment,
        "stray_print": stray_print,
    }.items():
        dispatcher.add_raw(name, handler)
    dispatcher.add("echo", echo, EchoParams)
    return dispatcher


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--connect", metavar="NAME")
    mode.add_argument("--stdio", action="store_true")
    args = parser.parse_args(argv)
    box: list[RpcConnection] = []
    dispatcher = build(box)
    if args.stdio:
        reader, writer = await open_stdio()
        rest = b""
    else:
        try:
            reader, writer, rest = await connect_to_desktop(args.connect, take_secret(os.environ))
        except HandshakeError as exc:
            print(f"rpc_peer: {exc}", file=sys.stderr)
            return 3
    box.append(RpcConnection(reader, writer, dispatcher, initial=rest))
    await box[0].serve()
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    sys.exit(eventloop.run(main(sys.argv[1:])))
