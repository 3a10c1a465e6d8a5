"""URLs of the authorization flow: the server's canonical resource URI, the well-known metadata
addresses in the order the MCP authorization specification tries them, and the HTTPS rule."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from agent_runtime.tool_runtime.mcp.errors import McpInsecureUrl
from contracts.addresses import is_loopback_host
from contracts.urls import UrlRejected, parse_url_host

__all__ = [
    "authorization_server_metadata_urls",
    "canonical_resource",
    "check_secure",
    "for_display",
    "origin",
    "protected_resource_metadata_urls",
    "resource_belongs_to",
]

_PROTECTED_RESOURCE = "/.well-known/oauth-protected-resource"
_OAUTH_SERVER = "/.well-known/oauth-authorization-server"
_OPENID = "/.well-known/openid-configuration"


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (MCP authorization, "Canonical Server URI"; RFC 8707 §2):
    lower-case scheme and host, no fragment, and no trailing slash on a bare origin."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower() if "@" not in parts.netloc else parts.netloc
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: the "authorization base URL" of the 2025-03-26 revision."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def for_display(url: str) -> str:
    """``url`` without credentials, query and fragment: what a message or a log line may show, because
    an authorization response carries its code and state in the query."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def protected_resource_metadata_urls(server_url: str, from_challenge: str | None) -> list[str]:
    """Where to look for RFC 9728 metadata, in the specification's order: the ``resource_metadata``
    of the ``WWW-Authenticate`` challenge, then the well-known URI with the endpoint's path inserted
    (``/.well-known/oauth-protected-resource/<path>``), then the one at the root."""
    candidates = [from_challenge] if from_challenge else []
    base = origin(server_url)
    path = _path(server_url)
    if path:
        candidates.append(f"{base}{_PROTECTED_RESOURCE}{path}")
    candidates.append(f"{base}{_PROTECTED_RESOURCE}")
    return list(dict.fromkeys(candidates))


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where an authorization server's metadata may be, in the specification's order: for an issuer
    with a path, RFC 8414 with the path inserted, OpenID Connect Discovery with the path inserted
    (RFC 8414 §5), then OpenID Connect Discovery with the path appended; for one without, RFC 8414
    then OpenID Connect Discovery at the root."""
    base = origin(issuer)
    path = _path(issuer)
    if path:
        return [f"{base}{_OAUTH_SERVER}{path}", f"{base}{_OPENID}{path}", f"{base}{path}{_OPENID}"]
    return [f"{base}{_OAUTH_SERVER}", f"{base}{_OPENID}"]


def resource_belongs_to(published: str, server_url: str) -> bool:
    """Whether the ``resource`` of protected-resource metadata names this server: the same origin,
    and a path equal to the server's or a parent of it on a segment boundary.

    RFC 9728 §3.3 asks for an exact match; a parent is admitted because a server at ``/mcp`` whose
    metadata is served from the root well-known URI names its origin, as the MCP SDKs accept and the
    revision of RFC 9728 §3.3 under discussion allows. Another origin, a sibling path or a longer path
    is somebody else's resource.
    """
    mine = urlsplit(canonical_resource(server_url))
    theirs = urlsplit(canonical_resource(published))
    if (mine.scheme, mine.netloc) != (theirs.scheme, theirs.netloc) or theirs.query:
        return False
    their_path = theirs.path.rstrip("/")
    my_path = mine.path.rstrip("/")
    return my_path == their_path or my_path.startswith(their_path + "/")


def check_secure(url: str, *, allow_insecure_loopback: bool, what: str) -> str:
    """``url`` if it may carry authorization traffic: HTTPS, or plain HTTP to a loopback address when
    the server's configuration allows it (MCP authorization, "Communication Security"). Raises
    ``McpInsecureUrl`` otherwise, also for a URL whose host could be read two ways (the project's
    one URL rule, ``contracts.urls``)."""
    try:
        host = parse_url_host(url)
    except UrlRejected as exc:
        raise McpInsecureUrl(f"The {what} {for_display(url)!r} cannot be used: {exc}.") from None
    scheme = urlsplit(url).scheme.lower()
    if scheme == "https":
        return url
    if scheme == "http" and is_loopback_host(host.name):
        if allow_insecure_loopback:
            return url
        raise McpInsecureUrl(
            f"The {what} {for_display(url)} uses plain HTTP; it is a loopback address, which the "
            "server's configuration must allow explicitly (allowInsecureLoopback)."
        )
    raise McpInsecureUrl(f"The {what} {for_display(url)} is not an HTTPS URL; authorization needs HTTPS.")
