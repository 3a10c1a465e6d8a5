"""What authorization keeps per MCP server: the tokens, and the client registered with its
authorization server. Secrets are left out of ``repr`` so that logging one of these by mistake
shows no credential."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClientInfo", "OAuthToken", "is_b64token", "union_scopes"]

# RFC 6750 §2.1: the characters a Bearer credential may hold.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def is_b64token(value: str) -> bool:
    return _B64TOKEN.fullmatch(value) is not None


# How long before the server's expiry a token stops being sent: a tenth of its lifetime, at most
# 30 s, so a request in flight does not arrive with a token that has just run out.
_EARLY_FRACTION = 0.1
_EARLY_CAP_S = 30.0


@dataclass(frozen=True)
class OAuthToken:
    """An access token, with what is needed to refresh it and to step its scope up.

    ``scope`` is what was granted (RFC 6749 §5.1: when the response omits it, what was requested);
    ``expires_at`` is the wall-clock time (seconds since the epoch, so it survives a restart) after
    which the token is refreshed before use, a little before the server's own expiry.
    """

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    scope: str | None = None
    expires_at: float | None = None

    @staticmethod
    def expiry(now: float, expires_in: float | None) -> float | None:
        if expires_in is None:
            return None
        return now + expires_in - min(_EARLY_CAP_S, expires_in * _EARLY_FRACTION)

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def to_json(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "refresh_token": self.refresh_token,
            "scope": self.scope,
            "expires_at": self.expires_at,
        }

    @classmethod
    def from_json(cls, data: object) -> OAuthToken | None:
        """The token saved by ``to_json``, or None for anything else (an entry from another
        version, or damaged): authorization then simply starts over."""
        if not isinstance(data, dict):
            return None
        access, refresh, scope = data.get("access_token"), data.get("refresh_token"), data.get("scope")
        expires_at, token_type = data.get("expires_at"), data.get("token_type", "Bearer")
        if not isinstance(access, str) or not access or not isinstance(token_type, str):
            return None
        if not (refresh is None or isinstance(refresh, str)) or not (scope is None or isinstance(scope, str)):
            return None
        if not (
            expires_at is None or (isinstance(expires_at, int | float) and not isinstance(expires_at, bool))
        ):
            return None
        return cls(
            access_token=access,
            token_type=token_type,
            refresh_token=refresh,
            scope=scope,
            expires_at=float(expires_at) if expires_at is not None else None,
        )


@dataclass(frozen=True)
class ClientInfo:
    """This client as an authorization server knows it.

    ``issuer`` is the authorization server it belongs to (client ids are per server, RFC 6749 §2.2);
    ``redirect_uri`` the loopback URI it was registered with; ``registered`` says it came from
    dynamic client registration (RFC 7591) rather than from the configuration, and
    ``secret_expires_at`` when its secret stops working (RFC 7591 §3.2.1; None: never).
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str = "none"
    redirect_uri: str | None = None
    issuer: str | None = None
    registered: bool = True
    secret_expires_at: float | None = None

    def usable(self, now: float) -> bool:
        return self.secret_expires_at is None or now < self.secret_expires_at

    def to_json(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "redirect_uri": self.redirect_uri,
            "issuer": self.issuer,
            "registered": self.registered,
            "secret_expires_at": self.secret_expires_at,
        }

    @classmethod
    def from_json(cls, data: object) -> ClientInfo | None:
        if not isinstance(data, dict):
            return None
        client_id, method = data.get("client_id"), data.get("token_endpoint_auth_method", "none")
        optional = {name: data.get(name) for name in ("client_secret", "redirect_uri", "issuer")}
        if not isinstance(client_id, str) or not client_id or not isinstance(method, str):
            return None
        if not all(value is None or isinstance(value, str) for value in optional.values()):
            return None
        expires = data.get("secret_expires_at")
        if not (expires is None or (isinstance(expires, int | float) and not isinstance(expires, bool))):
            return None
        return cls(
            client_id=client_id,
            client_secret=optional["client_secret"],
            token_endpoint_auth_method=method,
            redirect_uri=optional["redirect_uri"],
            issuer=optional["issuer"],
            registered=data.get("registered", True) is not False,
            secret_expires_at=float(expires) if expires is not None else None,
        )


def union_scopes(*scopes: str | None) -> str | None:
    """The space-separated union of scope strings, in first-seen order; None when empty."""
    merged: dict[str, None] = {}
    for scope in scopes:
        for item in (scope or "").split():
            merged.setdefault(item, None)
    return " ".join(merged) or None
