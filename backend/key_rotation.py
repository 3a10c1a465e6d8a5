"""Rotating the signing keys of the data directory (``cowork-backend keys rotate``).

A rotation replaces ``keys/auth_ed25519.pem`` and/or ``keys/policy_ed25519.pem`` with new keys, which
sign from then on, and keeps the former key's *public* half in ``keys/retired/`` until a given
time::

    keys/retired/auth_ed25519.<expiry: Unix seconds>.pem.pub
    keys/retired/policy_ed25519.<expiry>.pem.pub

Until then ``cowork-backend serve`` still accepts tokens the former auth key signed and still
publishes the former policy key (GET /policy/keys), so bundles it signed keep verifying; after
it the file is ignored, and the next rotation removes it. The former private key is deleted at once:
nothing signs with it again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from backend.common.files import write_atomically
from backend.common.keys import load_private_key, load_public_key, private_directory

__all__ = ["KEY_KINDS", "RetiredKey", "Rotation", "public_pem", "retired_public_keys", "rotate_keys"]

KEY_KINDS = ("auth", "policy")
"""``auth`` signs bearer tokens, ``policy`` signs policy bundles (backend.common.keys)."""

_RETIRED = re.compile(r"(auth|policy)_ed25519\.(\d{1,12})\.pem\.pub")


@dataclass(frozen=True)
class RetiredKey:
    kind: str
    path: Path
    expires_at: datetime
    key: Ed25519PublicKey


@dataclass(frozen=True)
class Rotation:
    kind: str
    public_key_pem: str
    """The new key's public half, PEM."""
    retired: RetiredKey | None
    """The former key, kept for verification until its ``expires_at``; None when there was none."""


def _keys_directory(data_dir: Path) -> Path:
    return data_dir / "keys"


def _public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)


def retired_public_keys(data_dir: Path, kind: str, now: datetime) -> list[RetiredKey]:
    """The former ``kind`` keys still within their grace period, newest expiry first."""
    folder = _keys_directory(data_dir) / "retired"
    if not folder.is_dir():
        return []
    found = []
    for path in folder.iterdir():
        match = _RETIRED.fullmatch(path.name)
        if match is None or match.group(1) != kind:
            continue
        expires_at = datetime.fromtimestamp(int(match.group(2)), tz=now.tzinfo)
        if expires_at <= now:
            continue
        found.append(RetiredKey(kind, path, expires_at, load_public_key(path)))
    return sorted(found, key=lambda retired: retired.expires_at, reverse=True)


def rotate_keys(
    data_dir: Path, kinds: tuple[str, ...], *, keep_for: timedelta, now: datetime
) -> list[Rotation]:
    """New ``kinds`` keys in ``data_dir``; each former key verifies for ``keep_for`` more.

    Raises KeyFileError when a current key file cannot be read (nothing is changed then)."""
    keys = private_directory(private_directory(data_dir) / "keys")
    current = {kind: keys / f"{kind}_ed25519.pem" for kind in kinds}
    former = {kind: load_private_key(path) if path.exists() else None for kind, path in current.items()}
    retired_folder = private_directory(keys / "retired")
    _remove_expired(retired_folder, now)
    expiry = int((now + keep_for).timestamp())
    rotations = []
    for kind in kinds:
        retired = None
        old = former[kind]
        if old is not None:
            # The public half is kept first: a crash between the two writes leaves the old key
            # signing, never a token nothing verifies.
            path = retired_folder / f"{kind}_ed25519.{expiry}.pem.pub"
            write_atomically(path, _public_pem(old.public_key()))
            retired = RetiredKey(kind, path, datetime.fromtimestamp(expiry, tz=now.tzinfo), old.public_key())
        new = Ed25519PrivateKey.generate()
        write_atomically(current[kind], new.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
        public = _public_pem(new.public_key())
        write_atomically(current[kind].with_name(current[kind].name + ".pub"), public)
        rotations.append(Rotation(kind, public.decode("ascii"), retired))
    return rotations


def _remove_expired(folder: Path, now: datetime) -> None:
    for path in folder.iterdir():
        match = _RETIRED.fullmatch(path.name)
        if match is not None and int(match.group(2)) <= now.timestamp():
            path.unlink(missing_ok=True)


def public_pem(key: Ed25519PublicKey) -> str:
    """A public key as PEM text (what the deployment's key secrets hold)."""
    return _public_pem(key).decode("ascii")
