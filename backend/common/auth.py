"""Bearer tokens: EdDSA (Ed25519) JWTs naming the caller's tenant and user.

Claims: ``tid`` (tenantId), ``sub`` (userId), ``iss``, ``aud``, ``exp``, ``iat`` and, optionally,
``scope`` — space-separated scope tokens as in OAuth 2.0 (RFC 6749 §3.3, RFC 9068 §2.2.3); ``admin``
makes the caller an administrator *of the token's tenant* (the operators' read side: the audit log and
its verification). The header's ``kid`` names the signing key. Header and claims must be strict JSON
(no name twice, no NaN or Infinity), and ``exp``/``iat`` instants between 1970 and the year 9999.
Every record a request reads or writes is scoped to the token's tenant and user — never to IDs in the
body.

Verification is the hot path of every request, so a verified token is remembered (by its exact string,
in a bounded LRU, only until its ``exp``): a client that reuses its token pays for one signature check,
not one per request.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeGuard

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from backend.common.clock import Clock
from backend.common.errors import BackendError, forbidden, unauthorized
from contracts.signing import key_id

__all__ = [
    "ADMIN_SCOPE",
    "DEFAULT_AUDIENCE",
    "DEFAULT_ISSUER",
    "Principal",
    "TokenIssuer",
    "TokenVerifier",
    "require_admin",
    "valid_tenant_id",
    "valid_user_id",
]

DEFAULT_ISSUER = "cowork-backend"
DEFAULT_AUDIENCE = "cowork"
_ALGORITHM = "EdDSA"
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_USER = re.compile(r"[^\x00-\x1f\x7f]{1,256}")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,64}( [\x21\x23-\x5b\x5d-\x7e]{1,64}){0,31}")
"""RFC 6749 §3.3 scope tokens, space-separated; bounded (32 tokens of at most 64 characters)."""
ADMIN_SCOPE = "admin"
_LAST_INSTANT = 253_402_300_799
"""9999-12-31T23:59:59Z in seconds since the epoch: the last moment a date-time can name. An ``exp`` or
``iat`` past it (or not a finite number) is no time at all."""


def valid_tenant_id(value: str) -> bool:
    """Tenant IDs are plain (letters, digits, ``._-``; at most 64): they become key prefixes."""
    return bool(_TENANT.fullmatch(value))


def valid_user_id(value: str) -> bool:
    """User IDs may be e-mail addresses or OS account names ("Jane Doe"); no control characters."""
    return bool(_USER.fullmatch(value))


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: from a verified token, never from a request body."""

    tenant_id: str
    user_id: str
    token: str = field(default="", repr=False, compare=False)
    """The bearer token itself, forwarded when one service calls another over HTTP."""
    scopes: frozenset[str] = frozenset()
    """The token's ``scope`` claim, split."""

    @property
    def is_admin(self) -> bool:
        """An administrator of :attr:`tenant_id` (never of another tenant)."""
        return ADMIN_SCOPE in self.scopes


def require_admin(principal: Principal, action: str) -> None:
    """``PERMISSION_DENIED`` (403) unless the caller holds the ``admin`` scope; ``action`` completes
    "Only an administrator of the tenant can …"."""
    if not principal.is_admin:
        raise forbidden(
            f"Only an administrator of the tenant can {action}; this token has no {ADMIN_SCOPE!r} scope",
            requiredScope=ADMIN_SCOPE,
        )


class TokenIssuer:
    """Mints tokens (``cowork-backend token``, and local mode for its own user)."""

    def __init__(
        self,
        private_key: Ed25519PrivateKey,
        clock: Clock,
        *,
        issuer: str = DEFAULT_ISSUER,
        audience: str = DEFAULT_AUDIENCE,
    ) -> None:
        self._key = private_key
        self._kid = key_id(private_key.public_key())
        self._clock = clock
        self._issuer = issuer
        self._audience = audience

    def mint(self, tenant_id: str, user_id: str, ttl: timedelta, *, scopes: Sequence[str] = ()) -> str:
        if not valid_tenant_id(tenant_id):
            raise ValueError("a tenant ID is 1-64 letters, digits, '.', '_' or '-'")
        if not valid_user_id(user_id):
            raise ValueError("a user ID is 1-256 characters without control characters")
        now = int(self._clock.now().timestamp())
        if not _is_instant(now + int(ttl.total_seconds())):
            raise ValueError("a token's expiry must fall between 1970 and the year 9999")
        claims: dict[str, Any] = {
            "tid": tenant_id,
            "sub": user_id,
            "iss": self._issuer,
            "aud": self._audience,
            "iat": now,
            "exp": now + int(ttl.total_seconds()),
        }
        if scopes:
            scope = " ".join(dict.fromkeys(scopes))
            if not _SCOPE.fullmatch(scope):
                raise ValueError("scopes are 1-32 words of printable ASCII without quotes or backslashes")
            claims["scope"] = scope
        return jwt.encode(claims, self._key, algorithm=_ALGORITHM, headers={"kid": self._kid})


class TokenVerifier:
    """Checks tokens against public keys only, with a bounded cache of verified tokens."""

    def __init__(
        self,
        public_keys: Sequence[Ed25519PublicKey],
        clock: Clock,
        *,
        issuer: str = DEFAULT_ISSUER,
        audience: str = DEFAULT_AUDIENCE,
        cache_size: int = 4096,
        leeway: timedelta = timedelta(seconds=30),
    ) -> None:
        if not public_keys:
            raise ValueError("a verifier needs at least one public key")
        self._keys = {key_id(key): key for key in public_keys}
        self._clock = clock
        self._issuer = issuer
        self._audience = audience
        self._leeway = leeway.total_seconds()
        self._cache: OrderedDict[str, tuple[Principal, float]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def verify(self, token: str) -> Principal:
        """The principal a valid token names; ``UNAUTHORIZED`` (401) with a reason otherwise."""
        now = self._clock.now().timestamp()
        with self._lock:
            cached = self._cache.get(token)
            if cached is not None:
                if now < cached[1] + self._leeway:
                    self._cache.move_to_end(token)
                    return cached[0]
                del self._cache[token]
        principal, expires = self._verify_signature_and_claims(token, now)
        with self._lock:
            self._cache[token] = (principal, expires)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return principal

    def _verify_signature_and_claims(self, token: str, now: float) -> tuple[Principal, float]:
        _check_strict_json(token)
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise unauthorized("malformed", "The bearer token is not a well-formed JWT") from None
        if header.get("alg") != _ALGORITHM:
            raise unauthorized("algorithm", "The bearer token must be signed with EdDSA")
        key = self._keys.get(str(header.get("kid", "")))
        if key is None:
            raise unauthorized(
                "unknown_key", "The bearer token was signed by a key this service does not trust"
            )
        try:
            # exp/iat are checked below against the injected clock, not PyJWT's wall clock, and sub
            # with tid below, so that each refusal names its claim; PyJWT checks iss and aud.
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[_ALGORITHM],
                audience=self._audience,
                issuer=self._issuer,
                options={
                    "verify_exp": False,
                    "verify_iat": False,
                    "verify_nbf": False,
                    "verify_sub": False,
                    "verify_jti": False,
                    "require": [],
                },
            )
        except jwt.InvalidSignatureError:
            raise unauthorized("invalid_signature", "The bearer token's signature is not valid") from None
        except jwt.MissingRequiredClaimError as exc:
            raise _bad_claims(exc.claim) from None
        except jwt.InvalidIssuerError:
            raise _bad_claims("iss") from None
        except jwt.InvalidAudienceError:
            raise _bad_claims("aud") from None
        except jwt.PyJWTError:
            raise unauthorized("malformed", "The bearer token is not a well-formed JWT") from None
        return self._principal(claims, now, token)

    def _principal(self, claims: dict[str, Any], now: float, token: str) -> tuple[Principal, float]:
        tenant, user, expires, issued = (claims.get(name) for name in ("tid", "sub", "exp", "iat"))
        if not isinstance(tenant, str) or not valid_tenant_id(tenant):
            raise _bad_claims("tid")
        if not isinstance(user, str) or not valid_user_id(user):
            raise _bad_claims("sub")
        if not _is_instant(expires):
            raise _bad_claims("exp")
        if not _is_instant(issued) or issued > now + self._leeway:
            raise _bad_claims("iat")
        if now >= expires + self._leeway:
            raise unauthorized("expired", "The bearer token has expired")
        scope = claims.get("scope", "")
        if not isinstance(scope, str) or (scope and not _SCOPE.fullmatch(scope)):
            raise _bad_claims("scope")
        scopes = frozenset(scope.split()) if scope else frozenset()
        return Principal(tenant_id=tenant, user_id=user, token=token, scopes=scopes), float(expires)


def _is_instant(value: Any) -> TypeGuard[int | float]:
    # Compared as they are, not as floats: a huge integer would overflow float() (and a NaN compares
    # false both ways, so it would never expire).
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= _LAST_INSTANT


def _refuse_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for name, _ in pairs:
        if name in seen:
            raise _NotStrict(f"the name {name!r} appears more than once")
        seen.add(name)
    return dict(pairs)


def _refuse_constant(name: str) -> Any:
    raise _NotStrict(f"{name} is not a JSON value")


class _NotStrict(ValueError):
    pass


def _check_strict_json(token: str) -> None:
    """The header and the claims are strict JSON: no repeated names, no NaN or Infinity.

    The signature covers the bytes, not one reading of them: ``{"tid": "acme", "tid": "globex"}`` is
    one tenant to a parser that keeps the first and another to one that keeps the last (PyJWT keeps
    the last), and a NaN ``exp`` compares false with every time, so it would never expire.
    """
    segments = token.split(".")
    if len(segments) != 3:
        return  # PyJWT reports the malformed token
    for part, segment in zip(("header fields", "claims"), segments[:2], strict=True):
        try:
            text = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        except (binascii.Error, ValueError):
            return  # likewise
        try:
            json.loads(text, object_pairs_hook=_refuse_repeats, parse_constant=_refuse_constant)
        except _NotStrict as exc:
            raise unauthorized("malformed", f"The bearer token's {part} are not strict JSON: {exc}") from None
        except (ValueError, RecursionError):
            return  # not JSON at all: PyJWT reports it


def _bad_claims(claim: str) -> BackendError:
    return unauthorized(
        "invalid_claims", f"The bearer token's {claim} claim is missing or invalid", claim=claim
    )
