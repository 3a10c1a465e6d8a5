"""Helpers for the tool runtime's tests: requests, a fake resolver, process checks, a local HTTP server."""

from __future__ import annotations

import contextlib
import datetime
import gzip
import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psutil
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from contracts.enums import ToolStatus
from contracts.errors import ErrorCode
from contracts.tools import ToolRequest, ToolResult, ToolScope


def call(tool: str, scope: ToolScope | None = None, **arguments: Any) -> ToolRequest:
    return ToolRequest(
        tool_name=tool,
        arguments=arguments,
        session_id="session-1",
        task_id="task-1",
        step_id="step-1",
        tool_call_id="call-1",
        scope=scope,
    )


def failed_with(result: ToolResult | None, code: ErrorCode) -> bool:
    return (
        result is not None
        and result.status is ToolStatus.FAILED
        and result.error is not None
        and result.error.code is code
    )


def ok(result: ToolResult) -> str:
    assert result.status is ToolStatus.SUCCEEDED, result.error
    assert result.output_text is not None
    return result.output_text


class FakeResolver:
    """DNS played by the test: each name answers with the next list given for it (the last repeats)."""

    def __init__(self, answers: dict[str, Sequence[Sequence[str]]]) -> None:
        self._answers = {name: [list(a) for a in lists] for name, lists in answers.items()}
        self.asked: list[str] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        answers = self._answers.get(host)
        if not answers:
            raise OSError(f"no such host {host}")
        return answers.pop(0) if len(answers) > 1 else answers[0]


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its parent counts as exited)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_gone(pids: Sequence[int], timeout: float = 10.0) -> list[int]:
    """The pids still running after at most ``timeout`` seconds (bounded poll)."""
    deadline = time.monotonic() + timeout
    alive = [pid for pid in pids if not gone(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pid for pid in alive if not gone(pid)]
    return alive


class _Handler(BaseHTTPRequestHandler):
    server: LocalHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        return

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        self.server.requests.append(
            {"method": self.command, "path": parts.path, "headers": dict(self.headers), "body": body}
        )
        route = getattr(self, "route_" + parts.path.strip("/").split("/")[0].replace("-", "_"), None)
        if route is None:
            self._send(404, b"not found")
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            route(parts.path, query, body)

    def _send(self, status: int, body: bytes, content_type: str = "text/plain", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def route_hello(self, path: str, query: dict[str, str], body: bytes) -> None:
        self._send(200, b"hello from the test server")

    def route_echo(self, path: str, query: dict[str, str], body: bytes) -> None:
        document = {"method": self.command, "headers": dict(self.headers), "body": body.decode()}
        self._send(200, json.dumps(document).encode(), "application/json")

    def route_status(self, path: str, query: dict[str, str], body: bytes) -> None:
        self._send(int(query["code"]), b"status body")

    def route_chain(self, path: str, query: dict[str, str], body: bytes) -> None:
        remaining = int(path.rsplit("/", 1)[-1])
        if remaining == 0:
            self._send(200, b"arrived")
        else:
            self._send(302, b"", Location=f"/chain/{remaining - 1}")

    def route_to(self, path: str, query: dict[str, str], body: bytes) -> None:
        self._send(int(query.get("code", "302")), b"", Location=query["location"])

    def route_size(self, path: str, query: dict[str, str], body: bytes) -> None:
        size = int(query["bytes"])
        line = b"0123456789abcdef" * 4 + b"\n"
        data = (line * (size // len(line) + 1))[:size]
        self._send(200, data)

    def route_binary(self, path: str, query: dict[str, str], body: bytes) -> None:
        self._send(200, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "image/png")

    def route_latin1(self, path: str, query: dict[str, str], body: bytes) -> None:
        self._send(200, "café crème".encode("latin-1"), "text/plain; charset=iso-8859-1")

    def route_bomb(self, path: str, query: dict[str, str], body: bytes) -> None:
        self._send(200, gzip.compress(b"\x00" * (12 * 1024 * 1024)), Content_Encoding="gzip")

    def route_slow(self, path: str, query: dict[str, str], body: bytes) -> None:
        # Answers only when the test lets it (bounded, so a failing test cannot hang the server).
        self.server.release.wait(30)
        self._send(200, b"finally")

    def route_drip(self, path: str, query: dict[str, str], body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        for _ in range(100_000):
            if self.server.release.wait(0.05):
                return
            self.wfile.write(b"x")
            self.wfile.flush()

    def route_endless(self, path: str, query: dict[str, str], body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()  # no length: HTTP/1.0, the body ends when the connection does
        chunk = b"y" * 65536
        while not self.server.release.is_set():
            self.wfile.write(chunk)


class LocalHTTPServer(ThreadingHTTPServer):
    """A real HTTP/1.0 server on 127.0.0.1 in a thread; records every request it gets."""

    daemon_threads = True

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> LocalHTTPServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()
        self._thread.join(10)


def self_signed_context(directory: Path) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1 (trusted by nobody)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context
