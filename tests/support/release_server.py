"""A static file server on loopback for release tests: HTTP Range, and misbehaviour on request.

``ReleaseServer(directory)`` serves the files of ``directory`` (a published release site) on
127.0.0.1 from a thread. ``server.behave(name, Behaviour(...))`` makes one file misbehave:

- ``ignore_range`` — answers every request with the whole file (200), as some servers do;
- ``endless`` — after the file, keeps sending bytes forever, without a Content-Length;
- ``extra`` — N more bytes than the file, with a Content-Length that matches them;
- ``stall_after`` — sends N bytes of the body, then nothing until the server stops;
- ``drop_after`` — announces the whole file, sends N bytes of it, then closes the connection
  (``drop_times`` limits how many requests are cut this way);
- ``status`` — answers with this HTTP status and no body.

``server.requests`` records (path, Range header) per request. Run as a program
(``python -m tests.support.release_server DIR``) it serves DIR until killed and prints its URL.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


@dataclass
class Behaviour:
    ignore_range: bool = False
    endless: bool = False
    extra: int = 0
    stall_after: int | None = None
    drop_after: int | None = None
    drop_times: int = 1_000_000
    status: int | None = None
    dropped: int = field(default=0, init=False)


class ReleaseServer:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.behaviours: dict[str, Behaviour] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.stopping = threading.Event()
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="release-server", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def behave(self, name: str, behaviour: Behaviour) -> None:
        self.behaviours[name] = behaviour

    def start(self) -> ReleaseServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def __enter__(self) -> ReleaseServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that hang up mid-request are what these tests are about


class _Handler(http.server.BaseHTTPRequestHandler):
    owner: ReleaseServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        owner = self.owner
        name = unquote(urlsplit(self.path).path).lstrip("/")
        owner.requests.append((name, self.headers.get("Range")))
        behaviour = owner.behaviours.get(name, Behaviour())
        path = owner.directory / name
        if behaviour.status is not None:
            self._empty(behaviour.status)
            return
        if ".." in name.split("/") or not path.is_file():
            self._empty(404)
            return
        size = path.stat().st_size
        start, end = 0, size
        status = 200
        match = _RANGE.fullmatch(self.headers.get("Range", ""))
        if match and not behaviour.ignore_range:
            start = int(match[1])
            end = int(match[2]) + 1 if match[2] else size
            if start >= size or end > size or start >= end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        if behaviour.endless:
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(end - start + behaviour.extra))
        self.end_headers()
        with path.open("rb") as source:
            self._body(source, start, end, behaviour)

    def _body(self, source: object, start: int, end: int, behaviour: Behaviour) -> None:
        assert hasattr(source, "fileno")
        limit = end - start
        if behaviour.drop_after is not None and behaviour.dropped < behaviour.drop_times:
            behaviour.dropped += 1
            self._send(source, start, min(limit, behaviour.drop_after))
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
            return
        if behaviour.stall_after is not None:
            self._send(source, start, min(limit, behaviour.stall_after))
            self.owner.stopping.wait()
            self.close_connection = True
            return
        self._send(source, start, limit)
        try:
            if behaviour.extra:
                self.wfile.write(os.urandom(behaviour.extra))
            while behaviour.endless and not self.owner.stopping.is_set():
                self.wfile.write(b"\0" * 65536)
        except OSError:
            self.close_connection = True

    def _send(self, source: object, offset: int, count: int) -> None:
        if count <= 0:
            return
        try:
            self.connection.sendfile(source, offset, count)  # type: ignore[arg-type]
        except OSError:
            self.close_connection = True

    def _empty(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main() -> None:
    server = ReleaseServer(Path(sys.argv[1])).start()
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()


if __name__ == "__main__":
    main()
