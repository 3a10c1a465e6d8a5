"""``python -m agent_runtime.scripted_gateway (--script FILE | --demo) [--host H] [--port N]``.

Prints one line when it accepts connections — ``Scripted LLM gateway listening on http://HOST:PORT``
(the URL is the line's last word, for a parent process that started it with ``--port 0``) — and
shuts down cleanly, exit status 0, on SIGINT or SIGTERM. The token to require may come from
``--token`` or, kept out of the process list, from ``COWORK_SCRIPTED_GATEWAY_TOKEN``. ``--tls`` serves
HTTPS with a self-signed certificate made at start (the URL is then ``https://``), which
``--tls-cert-out FILE`` writes out for the client to trust.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path

from contracts.addresses import is_loopback_host

from .app import GatewayApp
from .script import ScriptError, load_script
from .server import Serving, bind, url_for
from .state import GatewayState
from .tls import GatewayCertificate

__all__ = ["TOKEN_VARIABLE", "main"]

TOKEN_VARIABLE = "COWORK_SCRIPTED_GATEWAY_TOKEN"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent_runtime.scripted_gateway",
        description="A scripted LLM gateway speaking the Anthropic Messages and OpenAI Chat Completions "
        "streaming dialects, for tests, benchmarks and the offline demo model.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--script", metavar="FILE", help="a JSON script of turns to play, one per request")
    source.add_argument("--demo", action="store_true", help="the offline demo model (never runs out)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one (default)")
    parser.add_argument(
        "--token",
        help="require this token (Authorization: Bearer, or x-api-key for the Anthropic dialect); "
        f"{TOKEN_VARIABLE} in the environment does the same without showing it in the process list",
    )
    parser.add_argument(
        "--chunk-delay-ms",
        type=int,
        default=15,
        help="demo model only: pause between streamed chunks (default: 15)",
    )
    parser.add_argument(
        "--tls", action="store_true", help="serve HTTPS with a self-signed certificate made at start"
    )
    parser.add_argument(
        "--tls-cert-out",
        metavar="FILE",
        help="with --tls: write the certificate (PEM) here, for the client to trust",
    )
    parser.add_argument(
        "--keep-alive",
        type=float,
        default=5.0,
        help="seconds an idle client connection is kept open (default: 5, as uvicorn's)",
    )
    parser.add_argument(
        "--max-recorded",
        type=int,
        default=1000,
        help="keep only the latest N requests for /_scripted/requests (default: 1000)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print("scripted gateway: --port must be between 0 and 65535", file=sys.stderr)
        return 2
    if args.max_recorded < 0:
        print("scripted gateway: --max-recorded must not be negative", file=sys.stderr)
        return 2
    if args.chunk_delay_ms < 0:
        print("scripted gateway: --chunk-delay-ms must not be negative", file=sys.stderr)
        return 2
    if args.keep_alive <= 0:
        print("scripted gateway: --keep-alive must be positive", file=sys.stderr)
        return 2
    if args.tls_cert_out and not args.tls:
        print("scripted gateway: --tls-cert-out needs --tls", file=sys.stderr)
        return 2
    try:
        script = None if args.demo else load_script(args.script)
    except ScriptError as exc:
        print(f"scripted gateway: {exc}", file=sys.stderr)
        return 2
    try:
        sock = bind(args.host, args.port)
    except (OSError, ValueError) as exc:
        print(f"scripted gateway: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    if not is_loopback_host(args.host):
        print(f"scripted gateway: warning: listening on {args.host}, beyond this machine", file=sys.stderr)
    certificate = GatewayCertificate.generate(args.host) if args.tls else None
    if certificate is not None and args.tls_cert_out:
        certificate.write_certificate(Path(args.tls_cert_out))
    state = GatewayState(script, demo_chunk_delay_ms=args.chunk_delay_ms, max_recorded=args.max_recorded)
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    app = GatewayApp(state, token=token)
    label = " (offline demo model)" if args.demo else ""

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        stopping = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(signum, stopping.set)
            except (NotImplementedError, RuntimeError):
                # Windows' loops have no add_signal_handler: fall back to the plain handler.
                signal.signal(signum, lambda *_: loop.call_soon_threadsafe(stopping.set))
        serving = Serving(app, sock, tls=certificate, keep_alive_s=args.keep_alive)
        await serving.start()
        url = url_for(sock, tls=certificate is not None)
        print(f"Scripted LLM gateway{label} listening on {url}", flush=True)
        await stopping.wait()
        await serving.stop()

    asyncio.run(serve())
    return 0
