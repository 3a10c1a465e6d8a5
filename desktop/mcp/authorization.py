"""Signing in to an MCP server (MCP authorization, OAuth 2.1): which addresses the window opens in the
browser. Qt-free.

The runtime sends ``mcp_authorization_required`` with the server's authorization URL; the window opens
it in the system browser, and the runtime's loopback redirect completes the sign-in. The address comes
from a remote server's metadata, so only web addresses are handed to the operating system: an
``https://`` one, or ``http://`` to this computer (a local test server). Anything else — ``file:``, a
custom scheme that would start another program, ``javascript:`` — is shown, never opened.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from contracts.addresses import is_loopback_host
from desktop.i18n import translate

__all__ = ["host_of", "sign_in_problem"]


def host_of(url: str) -> str:
    """The host a sign-in page is on, as the user should read it; ``""`` when there is none."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def sign_in_problem(url: str) -> str:
    """Why ``url`` is not opened in the browser; ``""`` when it may be."""
    text = url.strip()
    if not text:
        return translate("McpServers", "The server gave no address to sign in at.")
    if any(ord(char) < 0x21 or ord(char) == 0x7F for char in text):
        return translate(
            "McpServers", "The sign-in address holds spaces or control characters, so Cowork did not open it."
        )
    try:
        parts = urlsplit(text)
        port = parts.port  # reading it checks it
    except ValueError:
        return translate(
            "McpServers", "The sign-in address is not a valid web address, so Cowork did not open it."
        )
    host = (parts.hostname or "").lower()
    if not host or port == 0:
        return translate("McpServers", "The sign-in address names no server, so Cowork did not open it.")
    if parts.username is not None or parts.password is not None:
        return translate(
            "McpServers", "The sign-in address holds a user name or password, so Cowork did not open it."
        )
    scheme = parts.scheme.lower()
    if scheme == "https":
        return ""
    if scheme == "http" and is_loopback_host(host):
        return ""
    if scheme == "http":
        return translate(
            "McpServers",
            "The sign-in address is plain http:// to another computer, so Cowork did not open it.",
        )
    return translate(
        "McpServers",
        "The sign-in address is not an https:// web page ({scheme}:), so Cowork did not open it.",
    ).format(scheme=scheme)
