"""Domain rules for ``Network.Http`` (seed 000 §8.2): the URL's host against ``allowedDomains``.

The URL's host comes from :func:`contracts.urls.parse_url_host`, the one URL rule the tool runtime's
own guard applies too (see there for what it refuses and why).

Entries: ``example.com`` matches that host exactly; ``*.example.com`` matches its subdomains at any
depth (``a.example.com``, ``a.b.example.com``) but **not** ``example.com`` itself — list both to
allow both. An IP address entry matches only that address; wildcards never match IP hosts.
"""

from __future__ import annotations

from contracts.urls import Host, UrlRejected, canonical_domain, ip_text, parse_url_host

__all__ = ["DomainRules", "Host", "UrlRejected", "normalise_entry", "parse_url_host"]


def normalise_entry(entry: str) -> tuple[str, bool]:
    """An ``allowedDomains`` entry as (host, is_wildcard). Raises :class:`UrlRejected`."""
    text = entry.strip()
    wildcard = text.startswith("*.")
    if wildcard:
        text = text[2:]
    # Brackets enclose an IPv6 address, as in a URL, and nothing else.
    bracketed = text.startswith("[") and text.endswith("]")
    if bracketed:
        text = text[1:-1]
    address = ip_text(text)
    if address is not None and (":" in address or not bracketed):
        if wildcard:
            raise UrlRejected(f"a wildcard cannot apply to an IP address: {entry}")
        return address, False
    if bracketed or not text or any(ch in text for ch in "*/:@ ?#[]"):
        raise UrlRejected(f"not a domain name, *.domain or IP address: {entry!r}")
    return canonical_domain(text), wildcard


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
        if exact is not None:
            return exact
        # Wildcards never match an IP host, with no test needed here: an IPv4 host ends in a number,
        # an IPv6 host has no dot, and a wildcard entry cannot end in a numeric label.
        name = host.name
        dot = name.find(".")
        while dot >= 0:
            entry = self._suffixes.get(name[dot + 1 :])
            if entry is not None:
                return entry
            dot = name.find(".", dot + 1)
        return None
