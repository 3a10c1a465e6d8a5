"""Authorization with nobody at the keyboard (the ``mcp probe`` command): play the browser's part by
following the authorization URL's redirects until one points at our loopback redirect URI, and take
the response from that URI's query without connecting to it.

This only works with an authorization server that approves without a person (a test server, or one
that trusts this client); one that shows a sign-in or consent page stops it with a clear error.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx

from agent_runtime.tool_runtime.mcp.errors import McpTransportError
from agent_runtime.tool_runtime.mcp.oauth.failures import AuthorizationFailed
from agent_runtime.tool_runtime.mcp.oauth.urls import check_secure, for_display

__all__ = ["follow_to_redirect_uri"]

_MAX_HOPS = 10
_REDIRECTS = (301, 302, 303, 307, 308)


def _same_endpoint(location: str, redirect_uri: str) -> bool:
    there, ours = urlsplit(location), urlsplit(redirect_uri)
    return (there.scheme.lower(), (there.hostname or "").lower(), there.port, there.path) == (
        ours.scheme.lower(),
        (ours.hostname or "").lower(),
        ours.port,
        ours.path,
    )


async def follow_to_redirect_uri(
    client: httpx.AsyncClient, authorization_url: str, redirect_uri: str, *, allow_insecure_loopback: bool
) -> dict[str, str]:
    """The query parameters of the redirect to ``redirect_uri`` that ``authorization_url`` leads to."""
    url = authorization_url
    for _ in range(_MAX_HOPS):
        try:
            # Cookies set along the way are kept by the client, as a browser would keep them.
            response = await client.get(url, headers={"Accept": "text/html,*/*"})
        except httpx.HTTPError as exc:
            raise McpTransportError(
                f"Could not reach the authorization server at {for_display(url)}: {type(exc).__name__}"
            ) from exc
        location = response.headers.get("location")
        if response.status_code >= 400:
            raise AuthorizationFailed(
                f"the authorization server refused the authorization request at {for_display(url)} "
                f"(HTTP {response.status_code})."
            )
        if response.status_code not in _REDIRECTS or not location:
            raise AuthorizationFailed(
                f"the authorization server answered {for_display(url)} with HTTP {response.status_code} "
                "instead of redirecting back to Cowork: it wants a person to sign in or approve. Headless "
                "authorization (the probe) only works with authorization servers that approve by "
                "themselves; authorize this server in the Cowork app, or configure a bearer token."
            )
        target = urljoin(url, location)
        if _same_endpoint(target, redirect_uri):
            return dict(parse_qsl(urlsplit(target).query, keep_blank_values=True))
        url = check_secure(target, allow_insecure_loopback=allow_insecure_loopback, what="sign-in page")
    raise AuthorizationFailed(
        f"the authorization server redirected more than {_MAX_HOPS} times without returning to Cowork."
    )
