"""Domain rules for ``Network.Http`` (seed 000 §8.2): the URL's host against ``allowedDomains``.

The URL is parsed strictly and refused when it could be read two ways: backslashes, whitespace or
control characters anywhere, credentials (``user:pass@``), a scheme other than http and https, a
percent-encoded host, a host that is all numbers without being a valid IPv4 address (``127.1``,
``0x7f.1``: resolvers read those as addresses). The host is lowercased, its trailing dot dropped and
IDNA-normalised (UTS 46); a host that httpx — the tool runtime's client — would encode differently is
refused, so the host checked is the host connected to.

Entries: ``example.com`` matches that host exactly; ``*.example.com`` matches its subdomains at any
depth (``a.example.com``, ``a.b.example.com``) but **not** ``example.com`` itself — list both to
allow both. An IP address entry matches only that address; wildcards never match IP hosts.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna

__all__ = ["DomainRules", "Host", "UrlRejected", "normalise_entry", "parse_url_host"]

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_PORT = re.compile(r"[0-9]{1,5}")
_ASCII_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_MAYBE_IP = re.compile(r"[0-9.]+|.*:.*")


class UrlRejected(ValueError):
    """The URL is not one the policy can vouch for; the message says why."""


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    """Lowercase ASCII (A-labels for international names), no trailing dot; IPs in canonical form."""
    is_ip: bool


def _canonical_domain(host: str) -> str:
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise UrlRejected("the URL has no host")
    if not host.isascii():
        try:
            mapped = idna.encode(host, uts46=True).decode("ascii")
            plain = idna.encode(host).decode("ascii")
        except (idna.IDNAError, UnicodeError) as exc:
            raise UrlRejected(f"the host is not a valid international domain name: {host}") from exc
        if mapped != plain:
            raise UrlRejected(f"the host is not written in its canonical form: {host}")
        host = mapped
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise UrlRejected(f"the host is not a valid domain name: {host}")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        raise UrlRejected(f"the host looks like an IP address but is not a valid one: {host}")
    return host


def _ip(text: str) -> str | None:
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
        and any(unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp") for ch in url if ord(ch) > 0x7F)
    ):
        raise UrlRejected("the URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UrlRejected("the URL cannot be parsed") from exc
    if parts.scheme.lower() not in ("http", "https"):
        raise UrlRejected("only http and https URLs are allowed")
    if not url[len(parts.scheme) + 1 :].startswith("//"):
        raise UrlRejected("the URL has no host")
    netloc = parts.netloc
    if "@" in netloc:
        raise UrlRejected("credentials in URLs are not allowed")
    if "%" in netloc:
        raise UrlRejected("percent-encoded hosts are not allowed")
    if netloc.startswith("["):
        end = netloc.find("]")
        address = _ip(netloc[1:end]) if end > 0 else None
        port = netloc[end + 1 :] if end > 0 else ""
        if address is None or ":" not in address:
            raise UrlRejected("the URL has an invalid IPv6 address")
        host = Host(address, is_ip=True)
    else:
        name, _, port = netloc.partition(":")
        port = f":{port}" if _ else ""
        address = _ip(name.rstrip(".")) if name else None
        if address is not None and ":" not in address:
            host = Host(address, is_ip=True)
        else:
            host = Host(_canonical_domain(name), is_ip=False)
    if port and not (port.startswith(":") and _PORT.fullmatch(port[1:]) and 0 < int(port[1:]) < 65536):
        raise UrlRejected("the URL has an invalid port")
    return host


def normalise_entry(entry: str) -> tuple[str, bool]:
    """An ``allowedDomains`` entry as (host, is_wildcard). Raises :class:`UrlRejected`."""
    text = entry.strip()
    wildcard = text.startswith("*.")
    if wildcard:
        text = text[2:]
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    address = _ip(text)
    if address is not None:
        if wildcard:
            raise UrlRejected(f"a wildcard cannot apply to an IP address: {entry}")
        return address, False
    if not text or any(ch in text for ch in "*/:@ ?#"):
        raise UrlRejected(f"not a domain name, *.domain or IP address: {entry!r}")
    return _canonical_domain(text), wildcard


class DomainRules:
    """``allowedDomains``, indexed: exact hosts in one set, wildcard suffixes in another."""

    __slots__ = ("_exact", "_suffixes")

    def __init__(self, entries: list[str]) -> None:
        self._exact: dict[str, str] = {}
        self._suffixes: dict[str, str] = {}
        for entry in entries:
            host, wildcard = normalise_entry(entry)
            (self._suffixes if wildcard else self._exact)[host] = entry

    def match(self, host: Host) -> str | None:
        """The entry that admits ``host``, if any."""
        exact = self._exact.get(host.name)
        if exact is not None or host.is_ip:
            return exact
        name = host.name
        dot = name.find(".")
        while dot >= 0:
            entry = self._suffixes.get(name[dot + 1 :])
            if entry is not None:
                return entry
            dot = name.find(".", dot + 1)
        return None
