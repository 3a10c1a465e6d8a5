"""Which network addresses an outbound request may reach: the SSRF guard's rules (seed 003 §8.3).

One rule for both places that fetch URLs on the agent's behalf: the tool runtime's ``HttpRequest`` (the
user's machine) and the Backend Tool Service's ``WebFetch`` (the organisation's egress). Pure: it
judges addresses and host spellings; each caller resolves names and vets every answer at connect time.

Allowed is a public unicast address (``ipaddress``'s ``is_global``, not multicast, not reserved).
Refused: loopback, private, link-local, unique-local, site-local, multicast, unspecified, reserved
and shared (CGNAT) ranges, in every spelling — IPv4 in the forms ``inet_aton`` accepts (``127.1``,
``0x7f.1``, ``2130706433``, ``0177.0.0.1``), IPv4-mapped, -compatible and -translated IPv6, and IPv6
that embeds a refused IPv4 address (6to4, Teredo, NAT64). ``allow_loopback`` admits exactly
127.0.0.0/8 and ::1, for tests against a local server; nothing else.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

__all__ = [
    "AddressPolicy",
    "IPAddress",
    "as_address",
    "embedded_ipv4",
    "is_loopback_host",
    "parse_host_ip",
    "parse_ipv4_loose",
]

IPAddress = IPv4Address | IPv6Address

_UNIQUE_LOCAL = IPv6Network("fc00::/7")
_NAT64 = IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = IPv6Network("64:ff9b:1::/48")
_IPV4_TRANSLATED = IPv6Network("::ffff:0:0:0/96")
_SHARED = IPv4Network("100.64.0.0/10")
_LOOPBACK_V4 = IPv4Network("127.0.0.0/8")
_LOOPBACK_V6 = IPv6Address("::1")
# One part of a dotted IPv4 spelling: hex after "0x", octal after a leading "0", else decimal.
_PART = re.compile(r"0[xX]([0-9a-fA-F]*)|0([0-7]*)|([1-9][0-9]*)", re.ASCII)


def parse_ipv4_loose(host: str) -> IPv4Address | None:
    """An IPv4 address in any spelling ``inet_aton`` (and so the system resolver) accepts, else None.

    One to four dot-separated parts, each decimal, octal (leading ``0``) or hex (``0x``); the last part
    fills the remaining bytes: ``127.1`` is 127.0.0.1 and ``2130706433`` is too.
    """
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        value = _parse_part(part)
        if value is None:
            return None
        values.append(value)
    *leading, last = values
    if any(value > 0xFF for value in leading):
        return None
    if last >= 1 << (8 * (4 - len(leading))):
        return None
    number = last
    for index, value in enumerate(leading):
        number |= value << (8 * (3 - index))
    return IPv4Address(number)


def _parse_part(part: str) -> int | None:
    # inet_aton's digits only: int() alone would also take signs, spaces, underscores and non-ASCII
    # digits ("0-1", "0x7f_00", "0١٢٧"), which the resolver reads as a name, not as a number.
    match = _PART.fullmatch(part)
    if match is None:
        return None
    hexadecimal, octal, decimal = match.groups()
    if hexadecimal is not None:
        return int(hexadecimal, 16) if hexadecimal else 0
    if octal is not None:
        return int(octal, 8) if octal else 0
    return int(decimal, 10)


def parse_host_ip(host: str) -> IPAddress | None:
    """The address a URL host denotes when it is an IP literal (any spelling), else None."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        try:
            return IPv6Address(text.replace("%25", "%", 1))
        except ValueError:
            return None
    return parse_ipv4_loose(text[:-1] if text.endswith(".") else text)


def embedded_ipv4(address: IPv6Address) -> list[IPv4Address]:
    """IPv4 addresses an IPv6 address routes to by translation or tunnelling (SIIT, NAT64, 6to4, Teredo)."""
    # IPv4-mapped and -compatible addresses are not here: the guard refuses them outright, whatever
    # IPv4 address they name (_mapped_or_compatible).
    found: list[IPv4Address] = []
    value = int(address)
    if address in _IPV4_TRANSLATED or address in _NAT64 or address in _NAT64_LOCAL:
        found.append(IPv4Address(value & 0xFFFFFFFF))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def _mapped_or_compatible(address: IPv6Address) -> bool:
    # ::ffff:a.b.c.d and ::a.b.c.d (but not :: and ::1): only a socket's spelling of an IPv4 address.
    return address.ipv4_mapped is not None or 1 < int(address) < 1 << 32


def _problem(address: IPAddress) -> str | None:
    # Decided before the ``is_*`` properties, which newer Pythons answer for the IPv4 address inside a
    # mapped one: the reason must not depend on the interpreter.
    if isinstance(address, IPv6Address) and _mapped_or_compatible(address):
        return "IPv4-mapped or IPv4-compatible"
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, IPv6Address):
        if address in _UNIQUE_LOCAL:
            return "unique-local"
        if address.is_site_local:
            return "site-local"
        for inner in embedded_ipv4(address):
            problem = _problem(inner)
            if problem is not None:
                return f"{problem} (embedded IPv4 {inner})"
    elif address in _SHARED:
        return "shared (carrier-grade NAT)"
    # With shared space (above) left out, ``is_private`` is exactly ``not is_global`` on every
    # supported Python, so it is the one test of "public" needed here.
    if address.is_private:
        return "private"
    if address.is_reserved:
        return "reserved"
    return None


class AddressPolicy:
    """Decides whether an outbound request may connect to an address."""

    def __init__(self, *, allow_loopback: bool = False) -> None:
        self.allow_loopback = allow_loopback

    def problem(self, address: IPAddress) -> str | None:
        """Why ``address`` is refused (``"loopback"``, ``"private"``…), or None when allowed."""
        if isinstance(address, IPv6Address) and address.scope_id:
            address = IPv6Address(str(address).split("%", 1)[0])
        if self.allow_loopback and (
            (isinstance(address, IPv4Address) and address in _LOOPBACK_V4) or address == _LOOPBACK_V6
        ):
            return None
        return _problem(address)

    def host_problem(self, host: str) -> str | None:
        """Why a URL host is refused before any lookup (a local name, a refused literal), or None."""
        name = host.rstrip(".").lower()
        if not self.allow_loopback and (name == "localhost" or name.endswith(".localhost")):
            return "a local host name"
        literal = parse_host_ip(host)
        if literal is not None:
            problem = self.problem(literal)
            if problem is not None:
                same = str(literal) == host.strip("[]").rstrip(".").lower()
                return f"a {problem} address" if same else f"{literal}, a {problem} address"
        return None


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a URL's host, an IPv6 literal with or without brackets) is this machine by its
    spelling alone, with no name lookup that could be answered from elsewhere: ``localhost`` or a
    loopback address (127.0.0.0/8, also mapped into IPv6, and ``::1``). ``*.localhost`` names are not
    trusted to resolve locally; for the loose IPv4 spellings (``127.1``) see :func:`parse_host_ip`."""
    if host.lower() == "localhost":
        return True
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        address = ip_address(host)
    except ValueError:
        return False
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def as_address(text: str) -> IPAddress | None:
    """A resolver's answer as an address (None for anything that is not one)."""
    try:
        return ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
