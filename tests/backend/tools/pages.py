"""A real web server on 127.0.0.1 (stdlib ``http.server`` in a thread) serving the pages WebFetch tests
read: HTML, text, binary, oversized, redirecting and stalling ones."""

from __future__ import annotations

import contextlib
import gzip
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Page", "PageServer", "gzipped", "serving_pages"]


@dataclass
class Page:
    body: bytes = b""
    content_type: str | None = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    stall_s: float = 0.0
    """Send the headers, then wait this long before the body (a slow server)."""
    declared_length: int | None = None


class PageServer:
    def __init__(
        self, server: ThreadingHTTPServer, pages: dict[str, Page], released: threading.Event
    ) -> None:
        self._server = server
        self.pages = pages
        self.requests: list[str] = []
        self._released = released

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def add(self, path: str, page: Page) -> str:
        self.pages[path] = page
        return self.url + path

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        return self.add(path, Page(status=status, headers={"Location": location}, content_type=None))


def _handler(
    pages: dict[str, Page], requests: list[str], released: threading.Event
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            requests.append(self.path)
            page = pages.get(self.path)
            if page is None:
                page = Page(status=404, body=b"<h1>Not here</h1>")
            self.send_response(page.status)
            if page.content_type is not None:
                self.send_header("Content-Type", page.content_type)
            for name, value in page.headers.items():
                self.send_header(name, value)
            length = page.declared_length if page.declared_length is not None else len(page.body)
            self.send_header("Content-Length", str(length))
            self.end_headers()
            self.wfile.flush()
            if page.stall_s:
                released.wait(page.stall_s)
            with contextlib.suppress(OSError):
                self.wfile.write(page.body)

    return Handler


@contextlib.contextmanager
def serving_pages(pages: dict[str, Page] | None = None) -> Iterator[PageServer]:
    table = dict(pages or {})
    requests: list[str] = []
    released = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(table, requests, released))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    pages_server = PageServer(server, table, released)
    pages_server.requests = requests
    try:
        yield pages_server
    finally:
        released.set()  # stalled handlers finish at once
        server.shutdown()
        server.server_close()
        thread.join(10)


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9)
