"""The one URL rule of ``HttpRequest``: which host a URL names, or why it names none for sure.

The policy enforcer (``allowedDomains``, seed 000 §8.2) and the tool runtime's own URL guard (seed 003
§8.3) both apply it, on the first URL and on every redirect hop, so neither admits a URL the other
would read differently. It lives here because the agent host and the tool runtime never import each
other.

The URL is parsed strictly and refused when it could be read two ways: backslashes, whitespace or
control characters anywhere, credentials (``user:pass@``; ``http://127.0.0.1\\@example.com/`` is host
``example.com`` to httpx and ``127.0.0.1`` to a browser), a scheme other than http and https, a
percent-encoded host, a host that is all numbers without being a valid IPv4 address (``127.1``,
``0x7f.1``: resolvers read those as addresses). The host is lowercased, its trailing dot dropped and
IDNA-normalised (UTS 46); a host that httpx — the tool runtime's client — would encode differently is
refused, so the host checked is the host connected to.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

__all__ = ["Host", "RedirectCheck", "UrlRejected", "canonical_domain", "ip_text", "parse_url_host"]

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_PORT = re.compile(r"[0-9]{1,5}")
_ASCII_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_MAYBE_IP = re.compile(r"[0-9.]+|.*:.*")


RedirectCheck = Callable[[str, str], Awaitable[str | None]]
"""Asked by HttpRequest before it follows a redirect, with the next hop's absolute URL and method:
``None`` to follow it, or the reason it may not be followed (the call then fails with that reason and
nothing is sent to that URL). The agent host passes one per call through ``ToolRouter.execute`` so
that every hop passes the same policy and approval checks as the first URL (seed 000 §8.2)."""


class UrlRejected(ValueError):
    """The URL does not name one host for sure; the message says why."""


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    """Lowercase ASCII (A-labels for international names), no trailing dot; IPs in canonical form."""
    is_ip: bool


def canonical_domain(host: str) -> str:
    """``host`` as a lowercase ASCII domain name without its trailing dot. Raises :class:`UrlRejected`."""
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise UrlRejected("the URL has no host")
    if not host.isascii():
        try:
            mapped = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError) as exc:
            raise UrlRejected(f"the host is not a valid international domain name: {host}") from exc
        # A name UTS 46 maps (full-width letters, ligatures, decomposed accents) is valid but not
        # canonical: IDNA 2008 alone refuses it. Where both succeed they agree (checked over every code
        # point), so the one test tells the two readings apart.
        try:
            idna.encode(host)
        except (idna.IDNAError, UnicodeError) as exc:
            raise UrlRejected(f"the host is not written in its canonical form: {host}") from exc
        host = mapped
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise UrlRejected(f"the host is not a valid domain name: {host}")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        raise UrlRejected(f"the host looks like an IP address but is not a valid one: {host}")
    return host


def ip_text(text: str) -> str | None:
    """The canonical form of an IP address in its standard notation, else None (``127.1`` is None)."""
    if not _MAYBE_IP.fullmatch(text):
        return None
    try:
        return ipaddress.ip_address(text).compressed
    except ValueError:
        return None


def parse_url_host(url: str) -> Host:
    """The host an HTTP request to ``url`` would connect to. Raises :class:`UrlRejected`."""
    if "\\" in url:
        raise UrlRejected("the URL contains a backslash")
    if _ASCII_UNSAFE.search(url) or (
        not url.isascii()
        and any(unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp") for ch in url if not ch.isascii())
    ):
        raise UrlRejected("the URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UrlRejected("the URL cannot be parsed") from exc
    if parts.scheme.lower() not in ("http", "https"):
        raise UrlRejected("only http and https URLs are allowed")
    # A URL without "//" after its scheme ("http:example.com") has an empty netloc, refused below as
    # a URL with no host.
    netloc = parts.netloc
    if "@" in netloc:
        raise UrlRejected("credentials in URLs are not allowed")
    if "%" in netloc:
        raise UrlRejected("percent-encoded hosts are not allowed")
    if netloc.startswith("["):
        end = netloc.find("]")  # there is one: urlsplit refuses a "[" without its "]"
        address = ip_text(netloc[1:end])
        port = netloc[end + 1 :]
        if address is None or ":" not in address:
            raise UrlRejected("the URL has an invalid IPv6 address")
        host = Host(address, is_ip=True)
    else:
        name, _, port = netloc.partition(":")
        port = f":{port}" if _ else ""
        # The name has no ":" (the port was split off), so an address here is IPv4.
        address = ip_text(name.rstrip("."))
        host = Host(address, is_ip=True) if address is not None else Host(canonical_domain(name), is_ip=False)
    if port and not (port.startswith(":") and _PORT.fullmatch(port[1:]) and 0 < int(port[1:]) < 65536):
        raise UrlRejected("the URL has an invalid port")
    return host
