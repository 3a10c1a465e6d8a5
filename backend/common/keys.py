"""Ed25519 key files: created once (private key owner-only, 0600), loaded at start-up.

Two key pairs live in the data directory's ``keys/`` folder: ``auth`` signs bearer tokens and
``policy`` signs policy bundles. Keeping them apart means publishing one never weakens the other.
Verifying sides are handed public keys only.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
    load_pem_public_key,
)

from backend.common.files import write_atomically

__all__ = [
    "KeyFileError",
    "load_or_create_private_key",
    "load_private_key",
    "load_public_key",
    "private_directory",
]


class KeyFileError(Exception):
    """A key file is missing, unreadable or not an Ed25519 key."""


def private_directory(path: Path) -> Path:
    """``path`` as a directory only its owner can enter (created if missing, tightened if not)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name != "nt":
        os.chmod(path, 0o700)
    return path


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise KeyFileError(f"cannot read the private key {path}: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path} is not an Ed25519 private key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = load_pem_public_key(path.read_bytes())
    except (OSError, ValueError, TypeError) as exc:
        raise KeyFileError(f"cannot read the public key {path}: {exc}") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path} is not an Ed25519 public key")
    return key


def load_or_create_private_key(path: Path) -> Ed25519PrivateKey:
    """The key at ``path``; a new one (and ``<name>.pub`` beside it) if there is none yet."""
    if path.exists():
        return load_private_key(path)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    private_directory(path.parent)
    write_atomically(path, pem)
    public = key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    path.with_name(path.name + ".pub").write_bytes(public)
    # Two processes starting at once may both have generated a key; whichever rename landed last
    # is on disk, and that is the one both must use.
    return load_private_key(path)
