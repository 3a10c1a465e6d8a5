"""HttpRequest (seed 003 §4.5, §8.3): one HTTP exchange, guarded against SSRF, bounded in time and size.

Every URL it is about to request — the first and each redirect hop — passes the same checks: the SSRF
guard (again at connect time, see ``transport``), the URL rule the policy applies too
(``contracts.urls.parse_url_host``: no backslash or userinfo in the authority, which parsers read two
ways), and, when the agent host gave one, the host's own check of the hop (``ToolContext.check_redirect``:
its ``allowedDomains`` and approvals). Redirects keep the methods HTTP asks for (httpx builds each hop):
303 and a POST answered 301 or 302 become GET without a body, 307 and 308 keep method and body.
"""

from __future__ import annotations

import asyncio
import codecs
import re
from collections.abc import Awaitable
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import TypeVar
from urllib.parse import urljoin

import httpcore
import httpx
from pydantic import Field, field_validator

from agent_runtime.tool_runtime.errors import DestinationRefused, ToolFailure
from agent_runtime.tool_runtime.output.capture import Capture
from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.platform.encoding import looks_binary
from agent_runtime.tool_runtime.tools.base import Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.network.transport import GuardedNetworkBackend, GuardedTransport
from contracts.addresses import AddressPolicy, parse_host_ip
from contracts.egress import Resolver, SystemResolver
from contracts.enums import ArtifactType, Capability, ToolName
from contracts.errors import ErrorCode
from contracts.urls import UrlRejected, parse_url_host
from contracts.validation import FieldProblem

__all__ = ["MAX_BODY_BYTES", "MAX_REDIRECTS", "HttpRequest", "HttpRequestArguments"]

T = TypeVar("T")

MAX_REDIRECTS = 5
#: A response body past this many bytes is aborted (seed 003 §4.5), counted after content decoding
#: so that a small gzip bomb is stopped too.
MAX_BODY_BYTES = 10 * 1024 * 1024
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# A DNS name after IDNA encoding: dot-separated labels of letters, digits, "-" and "_".
_HOST_NAME = re.compile(
    r"^(?=.{1,253}\.?$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*"
    r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$"
)
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# Message framing is the client's job: a caller-set length or encoding could desynchronise it.
_FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "upgrade", "te"})


class HttpRequestArguments(Arguments):
    url: str = Field(min_length=1, max_length=8192, description="Request URL (http or https)")
    method: str = Field(default="GET", description="HTTP method. Default: GET")
    headers: dict[str, str] = Field(default_factory=dict, description="Request headers")
    body: str | None = Field(default=None, description="Request body")
    timeout: int = Field(default=30, ge=1, le=600, description="Timeout in seconds, 1 to 600. Default: 30")

    @field_validator("method")
    @classmethod
    def _known_method(cls, value: str) -> str:
        method = value.upper()
        if method not in METHODS:
            raise ValueError(f"must be one of {', '.join(METHODS)}")
        return method

    @field_validator("headers")
    @classmethod
    def _valid_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, content in value.items():
            if not _TOKEN.match(name):
                raise FieldProblem(name[:60], "is not a valid header name")
            if name.lower() in _FRAMING_HEADERS:
                raise FieldProblem(name, "is set by the client and cannot be given")
            if any(c in content for c in "\r\n\x00"):
                raise FieldProblem(name, "must not contain line breaks or NUL bytes")
        return value


class HttpRequest(Tool[HttpRequestArguments]):
    name = ToolName.HTTP_REQUEST.value
    capability = Capability.NETWORK_HTTP
    description = (
        "Make an HTTP request and return the response. "
        "Only public http and https URLs can be reached; redirects are followed up to 5 times."
    )
    arguments = HttpRequestArguments

    def __init__(self, *, resolver: Resolver | None = None, allow_loopback: bool = False) -> None:
        self._policy = AddressPolicy(allow_loopback=allow_loopback)
        self._backend = GuardedNetworkBackend(resolver or SystemResolver(), self._policy)
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=GuardedTransport(self._backend),
                trust_env=False,  # no proxies or certificates from the environment
                follow_redirects=False,  # followed here, one vetted hop at a time
                # No cookies kept between calls: one task's session must not leak into another's.
                cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def run(self, args: HttpRequestArguments, context: ToolContext) -> ToolOutput:
        url = self._checked_url(args.url, "arguments.url")
        body = None
        if args.body is not None:
            try:
                body = args.body.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ToolFailure(
                    ErrorCode.INVALID_REQUEST, "arguments.body is not valid Unicode text (lone surrogate)"
                ) from exc
        try:
            async with asyncio.timeout(args.timeout) as budget:
                return await self._exchange(url, args, body, context, budget)
        except TimeoutError as exc:
            raise _timed_out(args.timeout) from exc
        except (httpcore.TimeoutException, httpx.TimeoutException) as exc:
            raise _timed_out(args.timeout) from exc
        except (httpcore.ConnectError, httpx.ConnectError) as exc:
            raise ToolFailure(
                ErrorCode.TOOL_EXECUTION_FAILED, f"Could not connect to {_origin(url)}"
            ) from exc
        except (httpcore.ProtocolError, httpx.RemoteProtocolError, httpx.LocalProtocolError) as exc:
            raise ToolFailure(
                ErrorCode.TOOL_EXECUTION_FAILED, f"The server at {_origin(url)} broke the HTTP protocol"
            ) from exc
        except httpx.DecodingError as exc:
            raise ToolFailure(
                ErrorCode.TOOL_EXECUTION_FAILED, "The response body could not be decoded (bad compression)"
            ) from exc
        except (httpcore.NetworkError, httpx.TransportError) as exc:
            raise ToolFailure(
                ErrorCode.TOOL_EXECUTION_FAILED, f"The connection to {_origin(url)} failed"
            ) from exc

    def _checked_url(self, raw: str, field: str) -> httpx.URL:
        if "\x00" in raw:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{field} must not contain NUL bytes")
        try:
            url = httpx.URL(raw.strip())
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{field} is not a valid URL") from exc
        checked = self._checked(url, field)
        _same_rule_as_the_policy(raw, field)
        return checked

    def _checked(self, url: httpx.URL, field: str) -> httpx.URL:
        if url.scheme not in ("http", "https"):
            shown = f"'{url.scheme}'" if url.scheme else "none"
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST, f"{field} must use http or https (scheme was {shown})"
            )
        if not url.host:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{field} has no host")
        if url.port is not None and not 0 < url.port < 65536:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{field} is not a valid URL (port {url.port})")
        if parse_host_ip(url.host) is None and not _HOST_NAME.match(url.host):
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST, f"{field} is not a valid URL (bad host name {url.host[:80]!r})"
            )
        problem = self._policy.host_problem(url.host)
        if problem is not None:
            raise DestinationRefused(
                f"{field} refused: {url.host} is {problem}; requests to loopback, private and "
                "link-local networks are refused"
            )
        return url

    async def _exchange(
        self,
        url: httpx.URL,
        args: HttpRequestArguments,
        body: bytes | None,
        context: ToolContext,
        budget: asyncio.Timeout,
    ) -> ToolOutput:
        client = self._http()
        try:
            request = client.build_request(
                args.method, url, headers=args.headers, content=body, timeout=float(args.timeout)
            )
        except (httpx.InvalidURL, httpx.LocalProtocolError, ValueError, TypeError) as exc:
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST, "arguments.headers or arguments.url is not valid"
            ) from exc
        for hop in range(MAX_REDIRECTS + 1):
            try:
                response = await client.send(request, stream=True)
            except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
                raise ToolFailure(
                    ErrorCode.TOOL_EXECUTION_FAILED, "The server redirected to an invalid URL"
                ) from exc
            try:
                following = response.next_request
                if following is None:
                    return await _read(response, context, args.method, redirects=hop)
                if hop == MAX_REDIRECTS:
                    raise ToolFailure(
                        ErrorCode.TOOL_EXECUTION_FAILED,
                        f"Too many redirects: more than {MAX_REDIRECTS} (last to {following.url})",
                    )
                # The Location as the server wrote it, made absolute: httpx has already re-encoded
                # what it parsed (a backslash in the authority becomes userinfo "%5C"), and the rule
                # must judge what other parsers would see.
                written = _absolute(str(request.url), response.headers.get("location", ""))
                field = f"redirect {hop + 1} to {written[:200]}"
                self._checked(following.url, field)
                _same_rule_as_the_policy(written, field)
                if context.check_redirect is not None:
                    refusal = await _outside_budget(
                        budget, context.check_redirect(str(following.url), following.method)
                    )
                    if refusal is not None:
                        raise ToolFailure(ErrorCode.CAPABILITY_DENIED, refusal)
                request = following
            finally:
                await response.aclose()
        raise ToolFailure(ErrorCode.TOOL_EXECUTION_FAILED, "Too many redirects")


def _same_rule_as_the_policy(url: str, field: str) -> None:
    """Refuse what the policy's URL parser refuses (one rule: ``contracts.urls``)."""
    try:
        parse_url_host(url)
    except UrlRejected as exc:
        raise ToolFailure(ErrorCode.INVALID_REQUEST, f"{field} refused: {exc}") from exc


def _absolute(base: str, location: str) -> str:
    try:
        return urljoin(base, location)
    except ValueError:
        return location  # unparseable: the rule then refuses it as written


async def _outside_budget(budget: asyncio.Timeout, waiting: Awaitable[T]) -> T:
    """Await ``waiting`` with the call's time budget stopped: the host's check of a redirect may wait
    for the user's approval, which is not the server's time to answer."""
    loop = asyncio.get_running_loop()
    deadline = budget.when()
    remaining = None if deadline is None else deadline - loop.time()
    budget.reschedule(None)
    try:
        return await waiting
    finally:
        if remaining is not None:
            budget.reschedule(loop.time() + remaining)


async def _read(response: httpx.Response, context: ToolContext, method: str, *, redirects: int) -> ToolOutput:
    content_type = response.headers.get("content-type", "")
    capture = Capture(context.max_output_bytes, spool=context.spool, name="response", suffix=".body")
    decoder = codecs.getincrementaldecoder(_charset(response))(errors="replace")
    text = Capture(context.max_output_bytes)
    try:
        async for chunk in response.aiter_bytes():
            if capture.total + len(chunk) > MAX_BODY_BYTES:
                raise ToolFailure(
                    ErrorCode.TOOL_EXECUTION_FAILED,
                    f"The response body is larger than {MAX_BODY_BYTES} bytes (10 MB); "
                    "the request was aborted",
                )
            capture.feed(chunk)
            text.feed(decoder.decode(chunk).encode("utf-8", errors="surrogatepass"))
        text.feed(decoder.decode(b"", final=True).encode("utf-8", errors="surrogatepass"))
    except BaseException:
        capture.discard()
        raise
    capture.close()
    shown = f"[binary body, {capture.total} bytes]" if looks_binary(capture.head) else text.kept.render()
    # After redirects the model must know which URL answered (its links are relative to that one).
    plural = "redirect" if redirects == 1 else "redirects"
    final = f"Final URL: {response.url} (after {redirects} {plural})\n" if redirects else ""
    header = (
        f"HTTP {response.status_code} {response.reason_phrase}\n"
        f"{final}"
        f"Content-Type: {content_type or '(none)'}\n"
        f"Content-Length: {capture.total}\n"
    )
    artifact = capture.artifact(ArtifactType.TOOL_OUTPUT, content_type or "application/octet-stream")
    output = header if method == "HEAD" and capture.total == 0 else f"{header}\n{shown}"
    return ToolOutput(text=output, artifacts=[] if artifact is None else [artifact])


def _charset(response: httpx.Response) -> str:
    charset = response.charset_encoding
    if charset:
        try:
            codecs.getincrementaldecoder(charset)
            return charset
        except LookupError:
            pass
    return "utf-8"


def _origin(url: httpx.URL) -> str:
    return f"{url.host}:{url.port}" if url.port else url.host


def _timed_out(seconds: int) -> ToolFailure:
    unit = "second" if seconds == 1 else "seconds"
    return ToolFailure(ErrorCode.TOOL_EXECUTION_TIMEOUT, f"HTTP request timed out after {seconds} {unit}")
