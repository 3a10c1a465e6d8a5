"""Where the backend is and how the runtime proves who it is (seed 000 §3.2; the desktop sets both).

``COWORK_BACKEND_URL`` is the base URL of the backend services (a path prefix is kept:
``https://cowork.example.com/api`` → ``…/api/sessions``). Plain ``http`` is accepted only for a loopback
host (``127.0.0.0/8``, ``::1``, ``localhost``) — the embedded backend — because the bearer token must
never cross a network in clear text. ``COWORK_BACKEND_TOKEN`` is that bearer token (RFC 6750
``b64token`` characters: a JWT fits); it never appears in a ``repr``, message or log line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

from contracts.addresses import is_loopback_host

from .errors import BackendConfigError

__all__ = ["TOKEN_VARIABLE", "URL_VARIABLE", "BackendConfig", "is_loopback_host"]

URL_VARIABLE = "COWORK_BACKEND_URL"
TOKEN_VARIABLE = "COWORK_BACKEND_TOKEN"

# RFC 6750 §2.1 b64token: what may follow "Bearer " in a header without quoting or breaking it.
_BEARER_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True, slots=True)
class BackendConfig:
    """The backend to call. Validated on construction; the token is kept out of ``repr``."""

    url: str
    token: str = field(repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", _checked_url(self.url))
        _check_token(self.token)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> BackendConfig:
        """Read ``COWORK_BACKEND_URL`` and ``COWORK_BACKEND_TOKEN``; both are required."""
        url = environ.get(URL_VARIABLE, "").strip()
        if not url:
            raise BackendConfigError(URL_VARIABLE, "is not set: it must be the backend services' URL")
        token = environ.get(TOKEN_VARIABLE, "").strip()
        if not token:
            raise BackendConfigError(TOKEN_VARIABLE, "is not set: the backend needs a bearer token")
        return cls(url=url, token=token)

    @property
    def loopback(self) -> bool:
        """The backend runs on this machine (the embedded default): no proxy may stand in between."""
        return is_loopback_host(httpx.URL(self.url).host)


def _checked_url(text: str) -> str:
    try:
        url = httpx.URL(text.strip())
    except (httpx.InvalidURL, TypeError):
        raise BackendConfigError(URL_VARIABLE, "is not a valid URL") from None
    if url.scheme not in ("http", "https"):
        raise BackendConfigError(URL_VARIABLE, "must be an http:// or https:// URL")
    if not url.host:
        raise BackendConfigError(URL_VARIABLE, "must name a host")
    if url.userinfo:
        # Credentials in a URL end up in logs and error messages; the token variable is their place.
        raise BackendConfigError(URL_VARIABLE, f"must not contain credentials (use {TOKEN_VARIABLE})")
    if url.query or url.fragment:
        raise BackendConfigError(URL_VARIABLE, "must not contain a ?query or #fragment")
    if url.scheme == "http" and not is_loopback_host(url.host):
        raise BackendConfigError(
            URL_VARIABLE,
            "must use https:// unless the backend is on this machine (127.0.0.1, ::1 or localhost): "
            "the bearer token must not cross a network unencrypted",
        )
    return str(url.copy_with(path=url.path.rstrip("/") or "/")).rstrip("/")


def _check_token(token: str) -> None:
    if not isinstance(token, str) or not token:
        raise BackendConfigError(TOKEN_VARIABLE, "is not set: the backend needs a bearer token")
    if not _BEARER_TOKEN.fullmatch(token):
        raise BackendConfigError(
            TOKEN_VARIABLE, "is not a bearer token (letters, digits and -._~+/ only, on one line)"
        )
