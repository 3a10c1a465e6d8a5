"""WebFetch: a public web page fetched by the backend — the organisation's egress — and returned as
readable Markdown (seed 001 §1 Backend Tool Service).

One ``GET``, redirects followed one vetted hop at a time (at most :data:`MAX_REDIRECTS`). Every URL —
the first and each ``Location`` — passes the URL rule the policy applies (``contracts.urls``: no
backslash, credentials or ambiguous host) and the SSRF guard, by its host first and again at connect
time, on every address its name resolves to (:mod:`contracts.egress`, the tool runtime's HttpRequest's
guard too). The body is bounded (:data:`MAX_PAGE_BYTES` after decompression, so a small gzip bomb is
stopped too) and so is the time (the call's ``timeoutSeconds``, within the service's 120 s budget).
HTML becomes Markdown (:mod:`backend.tools.markdown`); ``text/*`` and JSON/XML pages are returned as
they are; anything else (images, PDFs, archives) is refused rather than shown as noise.
"""

from __future__ import annotations

import asyncio
import codecs
import ssl
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from starlette.concurrency import run_in_threadpool

from backend.tools.base import BackendTool, ToolCall, ToolFailed, ToolOutput
from contracts.addresses import AddressPolicy
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode
from contracts.rest.tools import BackendToolName, WebFetchArguments
from contracts.tools import ToolArtifact
from contracts.urls import UrlRejected, parse_url_host

if TYPE_CHECKING:
    import httpx

    from contracts.egress import GuardedNetworkBackend, Resolver

# httpx, httpcore and the egress guard built on them are imported at the first fetch, as the page
# parser is (below): 16 ms of every backend start otherwise (measured), and most sessions fetch no page.

__all__ = ["MAX_ARTIFACT_CHARS", "MAX_PAGE_BYTES", "MAX_REDIRECTS", "WebFetch"]

MAX_REDIRECTS = 5
MAX_PAGE_BYTES = 5 * 1024 * 1024
"""A page past this many bytes (decoded) is not read to the end: the fetch fails."""
MAX_ARTIFACT_CHARS = 1_000_000
"""A page's whole Markdown, kept as an artifact when the answer is cut, is at most this long."""
USER_AGENT = "cowork-backend-webfetch/0.1 (+the Cowork Backend Tool Service)"
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/ld+json",
        "application/javascript",
        "application/yaml",
    }
)
_SNIFF_BYTES = 1024


class WebFetch(BackendTool[WebFetchArguments]):
    name = BackendToolName.WEB_FETCH.value
    description = (
        "Fetch a public web page (http or https) and return its content as Markdown: headings, lists, "
        "tables, code and links kept, navigation and scripts left out. For reading documentation, "
        "articles and references; HTML and text pages only. Redirects are followed up to 5 times."
    )
    arguments = WebFetchArguments

    def __init__(self, *, resolver: Resolver | None = None, allow_loopback: bool = False) -> None:
        self._policy = AddressPolicy(allow_loopback=allow_loopback)
        self._resolver = resolver
        self._backend: GuardedNetworkBackend | None = None
        self._ssl: ssl.SSLContext | None = None

    def _http(self) -> httpx.AsyncClient:
        """A client for one fetch: nothing (connections, cookies) outlives the call or crosses to
        another caller's, and nothing is bound to an event loop beyond it. The TLS context, which takes
        tens of milliseconds to load its certificates, is made once."""
        import httpx

        from contracts.egress import GuardedNetworkBackend, GuardedTransport, SystemResolver

        if self._backend is None:
            self._backend = GuardedNetworkBackend(self._resolver or SystemResolver(), self._policy)
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(trust_env=False)
        return httpx.AsyncClient(
            # A small pool kept briefly: the client lives for one fetch (one host and its redirects).
            transport=GuardedTransport(
                self._backend, self._ssl, max_connections=8, max_keepalive_connections=8, keepalive_expiry=5.0
            ),
            trust_env=False,  # the service's own egress: no proxies or certificates from the environment
            follow_redirects=False,  # followed here, one vetted hop at a time
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "text/html,application/xhtml+xml,text/*;q=0.9,*/*;q=0.1",
            },
        )

    async def run(self, call: ToolCall, args: WebFetchArguments) -> ToolOutput:
        import httpcore
        import httpx

        from contracts.egress import EgressRefused, HostNotFound

        url = self._checked(args.url.strip(), "arguments.url")
        try:
            async with asyncio.timeout(args.timeout_seconds):
                final_url, content_type, charset, body = await self._fetch(url)
        except TimeoutError as exc:
            raise _timed_out(args.timeout_seconds) from exc
        except (httpcore.TimeoutException, httpx.TimeoutException) as exc:
            raise _timed_out(args.timeout_seconds) from exc
        except EgressRefused as exc:
            raise ToolFailed(ErrorCode.INVALID_REQUEST, str(exc)) from exc
        except HostNotFound as exc:
            raise ToolFailed(ErrorCode.TOOL_EXECUTION_FAILED, str(exc)) from exc
        except (httpcore.ConnectError, httpx.ConnectError) as exc:
            raise ToolFailed(ErrorCode.TOOL_EXECUTION_FAILED, f"Could not connect to {_origin(url)}") from exc
        except httpx.DecodingError as exc:
            raise ToolFailed(
                ErrorCode.TOOL_EXECUTION_FAILED, "The page could not be decoded (bad compression)"
            ) from exc
        except (httpcore.ProtocolError, httpx.RemoteProtocolError, httpx.LocalProtocolError) as exc:
            raise ToolFailed(
                ErrorCode.TOOL_EXECUTION_FAILED, f"The server at {_origin(url)} broke the HTTP protocol"
            ) from exc
        except (httpcore.NetworkError, httpx.TransportError) as exc:
            raise ToolFailed(
                ErrorCode.TOOL_EXECUTION_FAILED, f"The connection to {_origin(url)} failed"
            ) from exc
        title, markdown = await self._readable(final_url, content_type, charset, body)
        return _answer(final_url, title, markdown, args.max_chars)

    def _checked(self, raw: str, field: str) -> httpx.URL:
        import httpx

        try:
            parse_url_host(raw)
        except UrlRejected as exc:
            raise ToolFailed(ErrorCode.INVALID_REQUEST, f"{field} refused: {exc}") from exc
        try:
            url = httpx.URL(raw)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise ToolFailed(ErrorCode.INVALID_REQUEST, f"{field} is not a valid URL") from exc
        if url.scheme not in ("http", "https") or not url.host:
            raise ToolFailed(ErrorCode.INVALID_REQUEST, f"{field} must be an http or https URL with a host")
        problem = self._policy.host_problem(url.host)
        if problem is not None:
            raise ToolFailed(
                ErrorCode.INVALID_REQUEST,
                f"{field} refused: {url.host} is {problem}; requests to loopback, private and link-local "
                "networks are refused",
            )
        return url

    async def _fetch(self, url: httpx.URL) -> tuple[httpx.URL, str, str | None, bytes]:
        async with self._http() as client:
            return await self._follow(client, url)

    async def _follow(
        self, client: httpx.AsyncClient, url: httpx.URL
    ) -> tuple[httpx.URL, str, str | None, bytes]:
        request = client.build_request("GET", url)
        for hop in range(MAX_REDIRECTS + 1):
            response = await client.send(request, stream=True)
            try:
                if response.next_request is None:
                    return await _read(response)
                if hop == MAX_REDIRECTS:
                    raise ToolFailed(
                        ErrorCode.TOOL_EXECUTION_FAILED, f"Too many redirects: more than {MAX_REDIRECTS}"
                    )
                # The Location as the server wrote it, made absolute: httpx has already re-encoded what
                # it parsed, and the rule must judge what other parsers would see.
                written = _absolute(str(request.url), response.headers.get("location", ""))
                checked = self._checked(written, f"redirect {hop + 1} to {written[:200]}")
                request = client.build_request("GET", checked)
            finally:
                await response.aclose()
        raise ToolFailed(ErrorCode.TOOL_EXECUTION_FAILED, "Too many redirects")

    async def _readable(
        self, url: httpx.URL, content_type: str, charset: str | None, body: bytes
    ) -> tuple[str | None, str]:
        if content_type in _HTML_TYPES or (not content_type and _looks_like_html(body)):
            # Parsing a large page takes CPU time measured in hundreds of milliseconds: off the event loop.
            # Imported on the first fetch: Beautiful Soup and markdownify cost ~45 ms of every backend
            # start otherwise, and most sessions never fetch a page.
            from backend.tools.markdown import html_to_markdown

            page = await run_in_threadpool(html_to_markdown, body, str(url), encoding=charset)
            return page.title, page.markdown
        return None, body.decode(_codec(charset), errors="replace")


async def _read(response: httpx.Response) -> tuple[httpx.URL, str, str | None, bytes]:
    url = response.url
    if not 200 <= response.status_code < 300:
        raise ToolFailed(
            ErrorCode.TOOL_EXECUTION_FAILED,
            f"{url} answered HTTP {response.status_code} {response.reason_phrase}",
        )
    declared = response.headers.get("content-type", "")
    content_type = declared.split(";", 1)[0].strip().lower()
    if content_type and not _readable_type(content_type):
        raise ToolFailed(
            ErrorCode.TOOL_EXECUTION_FAILED,
            f"WebFetch reads web pages (HTML or text); {url} answered {content_type}",
        )
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_PAGE_BYTES and not response.headers.get("content-encoding"):
        raise _too_large(url)
    received = bytearray()
    async for chunk in response.aiter_bytes():
        received += chunk
        if len(received) > MAX_PAGE_BYTES:
            raise _too_large(url)
    body = bytes(received)
    if not content_type and b"\x00" in body[:_SNIFF_BYTES]:
        raise ToolFailed(
            ErrorCode.TOOL_EXECUTION_FAILED,
            f"WebFetch reads web pages (HTML or text); {url} answered binary data",
        )
    return url, content_type, response.charset_encoding, body


def _readable_type(content_type: str) -> bool:
    return (
        content_type in _HTML_TYPES
        or content_type in _TEXT_TYPES
        or content_type.startswith("text/")
        or content_type.endswith(("+json", "+xml"))
    )


def _looks_like_html(body: bytes) -> bool:
    head = body[:_SNIFF_BYTES].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or b"<html" in head


def _codec(charset: str | None) -> str:
    if charset:
        try:
            codecs.lookup(charset)
            return charset
        except LookupError:
            pass
    return "utf-8"


def _answer(url: httpx.URL, title: str | None, markdown: str, max_chars: int) -> ToolOutput:
    heading = f"# {title}\n\n" if title else ""
    header = f"{heading}Source: {url}\n\n"
    if len(markdown) <= max_chars:
        return ToolOutput(text=header + markdown)
    kept = markdown[:max_chars]
    note = (
        f"\n\n[Cut at {max_chars} of {len(markdown)} characters; the whole page is attached as an "
        "artifact. Fetch again with a larger maxChars to read more.]"
    )
    artifact = ToolArtifact(
        artifact_type=ArtifactType.TOOL_OUTPUT,
        artifact_name="page.md",
        content_type="text/markdown; charset=utf-8",
        text=header + markdown[:MAX_ARTIFACT_CHARS],
    )
    return ToolOutput(text=header + kept + note, artifacts=[artifact])


def _absolute(base: str, location: str) -> str:
    try:
        return urljoin(base, location)
    except ValueError:
        return location  # unparseable: the rule then refuses it as written


def _origin(url: httpx.URL) -> str:
    return f"{url.host}:{url.port}" if url.port else url.host


def _too_large(url: httpx.URL) -> ToolFailed:
    return ToolFailed(
        ErrorCode.TOOL_EXECUTION_FAILED,
        f"{url} is larger than {MAX_PAGE_BYTES} bytes ({MAX_PAGE_BYTES // (1024 * 1024)} MiB); not read",
    )


def _timed_out(seconds: int) -> ToolFailed:
    unit = "second" if seconds == 1 else "seconds"
    return ToolFailed(ErrorCode.TOOL_EXECUTION_TIMEOUT, f"WebFetch timed out after {seconds} {unit}")
