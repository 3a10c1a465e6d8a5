"""WebFetch against real pages on 127.0.0.1: Markdown out of HTML, and the SSRF guard, size, type and
time limits — adversarially (redirects to private addresses, names resolving to loopback, bombs)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import pytest

from backend.common.auth import Principal
from backend.tools.base import ToolCall, ToolFailed, ToolOutput
from backend.tools.web_fetch import MAX_PAGE_BYTES, WebFetch
from contracts.errors import ErrorCode
from contracts.rest.tools import WebFetchArguments
from tests.backend.helpers import listening_socket
from tests.backend.tools.pages import Page, PageServer, gzipped, serving_pages

CALL = ToolCall(Principal("acme", "alice"), "ws_1", "sess_1", "task_1", "step_1")

ARTICLE = b"""<!doctype html>
<html><head><title>Release notes</title><style>body { color: red }</style>
<script>document.write("tracking")</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<main>
<h1>Version 2.0</h1>
<p>The <strong>new</strong> parser is <a href="/docs/parser">documented here</a>.</p>
<ul><li>faster</li><li>safer</li></ul>
<pre><code>pip install thing==2.0</code></pre>
<table><tr><th>name</th><th>value</th></tr><tr><td>speed</td><td>2x</td></tr></table>
</main>
<footer>Copyright nobody</footer>
</body></html>"""


class FakeResolver:
    """DNS as a test wants it: names to fixed answers, and which names were asked."""

    def __init__(self, answers: dict[str, Sequence[str]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        if host not in self.answers:
            raise OSError(f"no such host: {host}")
        return self.answers[host]


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with serving_pages() as server:
        yield server


async def fetch(tool: WebFetch, url: str, **arguments: object) -> ToolOutput:
    return await tool.run(CALL, WebFetchArguments.model_validate({"url": url, **arguments}))


async def refused(tool: WebFetch, url: str, **arguments: object) -> ToolFailed:
    with pytest.raises(ToolFailed) as caught:
        await fetch(tool, url, **arguments)
    return caught.value


async def test_an_html_page_comes_back_as_readable_markdown(pages: PageServer) -> None:
    url = pages.add("/notes", Page(ARTICLE))
    output = await fetch(WebFetch(allow_loopback=True), url)
    text = output.text
    assert text.startswith(f"# Release notes\n\nSource: {url}\n\n")
    assert "# Version 2.0" in text
    assert f"[documented here]({pages.url}/docs/parser)" in text
    assert "- faster\n- safer" in text
    assert "```\npip install thing==2.0\n```" in text
    assert "| speed | 2x |" in text
    for noise in ("tracking", "color: red", "Home", "Copyright"):
        assert noise not in text
    assert output.artifacts == []


async def test_text_and_json_come_back_as_they_are(pages: PageServer) -> None:
    tool = WebFetch(allow_loopback=True)
    text = pages.add("/a.txt", Page(b"plain *text*\n", content_type="text/plain"))
    data = pages.add("/a.json", Page(b'{"a": 1}', content_type="application/json"))
    latin = pages.add("/latin", Page("café".encode("latin-1"), content_type="text/plain; charset=latin-1"))
    assert (await fetch(tool, text)).text.endswith("plain *text*\n")
    assert (await fetch(tool, data)).text.endswith('{"a": 1}')
    assert (await fetch(tool, latin)).text.endswith("café")


async def test_a_long_page_is_cut_and_kept_whole_as_an_artifact(pages: PageServer) -> None:
    body = b"<p>" + b"word " * 4000 + b"</p><p>the very end</p>"
    url = pages.add("/long", Page(body))
    output = await fetch(WebFetch(allow_loopback=True), url, maxChars=1000)
    assert "the very end" not in output.text
    assert "[Cut at 1000 of" in output.text
    (artifact,) = output.artifacts
    assert artifact.text is not None
    assert artifact.text.endswith("the very end")
    assert artifact.content_type.startswith("text/markdown")


async def test_loopback_is_refused_unless_explicitly_allowed(pages: PageServer) -> None:
    url = pages.add("/secret", Page(b"<p>internal</p>"))
    failure = await refused(WebFetch(), url)
    assert failure.code is ErrorCode.INVALID_REQUEST
    assert "loopback" in failure.message
    localhost = url.replace("127.0.0.1", "localhost")
    assert "local host name" in (await refused(WebFetch(), localhost)).message
    assert pages.requests == []


async def test_a_name_resolving_to_loopback_is_refused_before_connecting(pages: PageServer) -> None:
    pages.add("/secret", Page(b"<p>internal</p>"))
    port = pages.url.rsplit(":", 1)[1]
    resolver = FakeResolver(
        {"intranet.example.com": ["127.0.0.1"], "mixed.example.com": ["93.184.216.34", "::1"]}
    )
    tool = WebFetch(resolver=resolver)
    failure = await refused(tool, f"http://intranet.example.com:{port}/secret")
    assert "resolves to 127.0.0.1, a loopback address" in failure.message
    failure = await refused(tool, f"http://mixed.example.com:{port}/secret")
    assert "resolves to ::1, a loopback address" in failure.message
    assert pages.requests == []


@pytest.mark.parametrize(
    ("location", "problem"),
    [
        ("http://10.1.2.3/admin", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://internal.example.com/", "private"),
        ("http://[fd00::1]/", "unique-local"),
    ],
)
async def test_every_redirect_hop_passes_the_guard(pages: PageServer, location: str, problem: str) -> None:
    # Loopback allowed (the test's pages are on it); every other non-public address still refused.
    resolver = FakeResolver({"internal.example.com": ["10.0.0.7"]})
    tool = WebFetch(resolver=resolver, allow_loopback=True)
    url = pages.redirect("/jump", location)
    failure = await refused(tool, url)
    assert failure.code is ErrorCode.INVALID_REQUEST
    assert problem in failure.message
    assert pages.requests == ["/jump"]


@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.1\\@evil.example.com/",
        "http://user:pass@127.0.0.1/",
        "file:///etc/passwd",
        "gopher://x/",
    ],
)
async def test_a_redirect_the_url_rule_refuses_is_not_followed(pages: PageServer, location: str) -> None:
    url = pages.redirect("/jump", location)
    failure = await refused(WebFetch(allow_loopback=True), url)
    assert failure.code is ErrorCode.INVALID_REQUEST
    assert failure.message.startswith("redirect 1 to")
    assert pages.requests == ["/jump"]


async def test_redirects_are_followed_a_few_times_only(pages: PageServer) -> None:
    pages.add("/end", Page(b"<p>arrived</p>"))
    pages.redirect("/one", "/two")
    pages.redirect("/two", f"{pages.url}/end", status=301)
    output = await fetch(WebFetch(allow_loopback=True), f"{pages.url}/one")
    assert output.text.startswith(f"Source: {pages.url}/end")
    assert "arrived" in output.text
    for hop in range(7):
        pages.redirect(f"/loop{hop}", f"/loop{hop + 1}")
    failure = await refused(WebFetch(allow_loopback=True), f"{pages.url}/loop0")
    assert "Too many redirects" in failure.message


@pytest.mark.parametrize(
    "content_type",
    ["image/png", "application/pdf", "application/octet-stream", "video/mp4", "application/zip"],
)
async def test_pages_that_are_not_html_or_text_are_refused(pages: PageServer, content_type: str) -> None:
    url = pages.add("/file", Page(b"\x89PNG\r\n\x1a\n\x00\x00binary", content_type=content_type))
    failure = await refused(WebFetch(allow_loopback=True), url)
    assert failure.code is ErrorCode.TOOL_EXECUTION_FAILED
    assert f"answered {content_type}" in failure.message


async def test_a_page_without_a_type_is_read_only_if_it_is_not_binary(pages: PageServer) -> None:
    tool = WebFetch(allow_loopback=True)
    binary = pages.add("/blob", Page(b"\x00\x01\x02binary", content_type=None))
    assert "binary data" in (await refused(tool, binary)).message
    html = pages.add("/untyped", Page(b"<html><body><h2>Hi</h2></body></html>", content_type=None))
    assert "## Hi" in (await fetch(tool, html)).text


async def test_oversized_pages_are_not_read_to_the_end(pages: PageServer) -> None:
    tool = WebFetch(allow_loopback=True)
    big = pages.add("/big", Page(b"<p>" + b"a" * (MAX_PAGE_BYTES + 10) + b"</p>"))
    assert "larger than" in (await refused(tool, big)).message
    # A length declared far past the limit is refused before a byte of the body is awaited.
    declared = pages.add("/declared", Page(b"<p>small</p>", declared_length=100 * MAX_PAGE_BYTES, stall_s=30))
    started = time.monotonic()
    assert "larger than" in (await refused(tool, declared, timeoutSeconds=20)).message
    assert time.monotonic() - started < 10
    # A small compressed body that inflates past the limit: counted after decompression.
    bomb = pages.add(
        "/bomb",
        Page(gzipped(b"\x20" * (MAX_PAGE_BYTES + 1024)), headers={"Content-Encoding": "gzip"}),
    )
    assert "larger than" in (await refused(tool, bomb)).message


async def test_an_error_status_is_a_failed_fetch(pages: PageServer) -> None:
    failure = await refused(WebFetch(allow_loopback=True), f"{pages.url}/missing")
    assert failure.code is ErrorCode.TOOL_EXECUTION_FAILED
    assert "answered HTTP 404" in failure.message


async def test_a_slow_page_times_out_with_a_clear_failure(pages: PageServer) -> None:
    url = pages.add("/slow", Page(b"<p>late</p>", stall_s=30))
    started = time.monotonic()
    failure = await refused(WebFetch(allow_loopback=True), url, timeoutSeconds=1)
    assert failure.code is ErrorCode.TOOL_EXECUTION_TIMEOUT
    assert failure.message == "WebFetch timed out after 1 second"
    assert time.monotonic() - started < 10


async def test_an_unreachable_server_and_bad_urls_fail_clearly() -> None:
    closed = listening_socket()
    port = closed.getsockname()[1]
    closed.close()
    tool = WebFetch(allow_loopback=True)
    assert "Could not connect" in (await refused(tool, f"http://127.0.0.1:{port}/")).message
    assert (await refused(tool, "ftp://example.com/file")).code is ErrorCode.INVALID_REQUEST
    assert (await refused(tool, "not a url")).code is ErrorCode.INVALID_REQUEST
    assert (
        "resolve" in (await refused(WebFetch(resolver=FakeResolver({})), "http://nowhere.example/")).message
    )
