"""Key files: Ed25519 private keys as PKCS#8 PEM (optionally encrypted), public keys as one line of
base64url (``contracts.signing.public_key_to_text``), the pinned root set as ``root-keys.json``.

Private keys are created owner-only (0600) and never overwrite a file: ``O_EXCL`` makes the refusal
atomic, so two runs cannot both believe they wrote the key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)
from pydantic import ValidationError

from contracts.release import RootKeySet
from contracts.signing import key_id, public_key_from_text, public_key_to_text
from contracts.validation import describe, field_path
from cowork_release.errors import ReleaseError

__all__ = [
    "ROOT_SET_NAME",
    "GeneratedKey",
    "generate_release_key",
    "generate_root_keys",
    "load_private_key",
    "load_public_key",
    "load_root_set",
]

ROOT_SET_NAME = "root-keys.json"


@dataclass(frozen=True)
class GeneratedKey:
    key_id: str
    private_path: Path
    public_path: Path | None = None


def _refuse_existing(paths: list[Path]) -> None:
    existing = [str(path) for path in paths if path.exists() or path.is_symlink()]
    if existing:
        raise ReleaseError(f"refusing to overwrite {', '.join(existing)}")


def _write_new(path: Path, data: bytes, mode: int) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    except FileExistsError:
        raise ReleaseError(f"refusing to overwrite {path}") from None
    except OSError as exc:
        raise ReleaseError(f"cannot write {path}: {exc.strerror}") from None
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _pem(key: Ed25519PrivateKey, passphrase: bytes | None) -> bytes:
    encryption = BestAvailableEncryption(passphrase) if passphrase else NoEncryption()
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, encryption)


def _directory(path: Path) -> None:
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ReleaseError(f"cannot create {path}: {exc.strerror}") from None


def generate_root_keys(
    out_dir: Path, *, count: int, threshold: int, passphrase: bytes | None
) -> tuple[list[GeneratedKey], Path]:
    """``root-1.key`` … ``root-N.key`` (0600) and ``root-keys.json``, the set the desktop pins."""
    if not 1 <= threshold <= count:
        raise ReleaseError(f"--threshold must be between 1 and --count ({count}), not {threshold}")
    key_paths = [out_dir / f"root-{index}.key" for index in range(1, count + 1)]
    set_path = out_dir / ROOT_SET_NAME
    _refuse_existing([*key_paths, set_path])
    _directory(out_dir)
    keys = [Ed25519PrivateKey.generate() for _ in key_paths]
    root_set = RootKeySet(keys=[public_key_to_text(key.public_key()) for key in keys], threshold=threshold)
    for path, key in zip(key_paths, keys, strict=True):
        _write_new(path, _pem(key, passphrase), 0o600)
    _write_new(set_path, (root_set.model_dump_json(by_alias=True, indent=2) + "\n").encode(), 0o644)
    generated = [
        GeneratedKey(key_id=key_id(key.public_key()), private_path=path)
        for path, key in zip(key_paths, keys, strict=True)
    ]
    return generated, set_path


def generate_release_key(out_path: Path, *, passphrase: bytes | None) -> GeneratedKey:
    """A release signing key: ``NAME.key`` (0600) and ``NAME.pub`` for the root holders to delegate."""
    if out_path.suffix != ".key":
        raise ReleaseError(f"a private key file is named *.key, not {out_path.name}")
    public_path = out_path.with_suffix(".pub")
    _refuse_existing([out_path, public_path])
    _directory(out_path.parent)
    key = Ed25519PrivateKey.generate()
    _write_new(out_path, _pem(key, passphrase), 0o600)
    _write_new(public_path, (public_key_to_text(key.public_key()) + "\n").encode(), 0o644)
    return GeneratedKey(key_id=key_id(key.public_key()), private_path=out_path, public_path=public_path)


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ReleaseError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise ReleaseError(f"cannot read {what} {path}: {exc.strerror}") from None


def load_private_key(path: Path, passphrase: bytes | None) -> Ed25519PrivateKey:
    data = _read(path, "key file")
    try:
        try:
            key = load_pem_private_key(data, password=passphrase)
        except TypeError:
            if passphrase is None:
                raise ReleaseError(
                    f"{path} is encrypted: name the passphrase's variable with --passphrase-env"
                ) from None
            # The passphrase is for the command's encrypted keys; this one is not encrypted.
            key = load_pem_private_key(data, password=None)
    except ValueError:
        raise ReleaseError(f"{path} is not a PEM private key, or the passphrase is wrong") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ReleaseError(f"{path} is not an Ed25519 key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    text = _read(path, "public key file").decode("ascii", errors="replace").strip()
    try:
        return public_key_from_text(text)
    except ValueError:
        raise ReleaseError(f"{path} does not hold an Ed25519 public key (one line of base64url)") from None


def load_root_set(path: Path) -> RootKeySet:
    try:
        return RootKeySet.model_validate_json(_read(path, "root key set"))
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = field_path(first["loc"])
        raise ReleaseError(f"{path} is not a root key set: {where} {describe(first)}") from None
