"""PKCE with the S256 method (RFC 7636 §4.1–4.2) and the ``state`` value of the authorization request."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field

__all__ = ["Pkce", "new_state", "s256_challenge"]


def s256_challenge(verifier: str) -> str:
    """``BASE64URL-ENCODE(SHA256(ASCII(code_verifier)))`` without padding (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Pkce:
    verifier: str = field(repr=False)
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        # 64 random bytes → 86 characters of [A-Za-z0-9_-], inside RFC 7636's 43–128 unreserved
        # characters, with 512 bits of entropy (§7.1 asks for at least 256).
        verifier = secrets.token_urlsafe(64)
        return cls(verifier=verifier, challenge=s256_challenge(verifier))


def new_state() -> str:
    return secrets.token_urlsafe(32)
