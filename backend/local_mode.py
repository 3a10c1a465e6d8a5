"""The embedded default (docs/architecture/index.md): the data directory, the key pairs kept in it,
and the state file the desktop and the runtime read to find and call their local backend.

``<data dir>/backend.json`` (owner-only, 0600) while the server runs::

    {"url": "http://127.0.0.1:53117", "token": "<bearer token>", "pid": 4242,
     "tenantId": "local", "userId": "jane", "policyKeys": [{"keyId": …, "publicKey": …}],
     "startedAt": "2026-02-21T15:00:00Z"}

It is removed on a clean shutdown; a file whose ``pid`` is not running is stale. How clients share
this backend and when it stops on its own: :mod:`contracts.local_backend`.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from platformdirs import user_data_dir

from backend.common.auth import valid_user_id
from backend.common.files import write_atomically
from backend.common.keys import load_or_create_private_key, private_directory
from contracts.local_backend import STATE_FILE
from contracts.rest.policies import PolicyKeySet

__all__ = [
    "LOCAL_TENANT",
    "STATE_FILE",
    "KeyPairs",
    "default_data_dir",
    "local_user",
    "remove_state_file",
    "write_state_file",
]

LOCAL_TENANT = "local"


def default_data_dir() -> Path:
    return Path(user_data_dir("Cowork", appauthor=False)) / "backend"


def local_user() -> str:
    """The OS account name, as the user of local mode's token."""
    try:
        name = getpass.getuser()
    except (OSError, KeyError):
        name = ""
    return name if name and valid_user_id(name) else "user"


@dataclass(frozen=True)
class KeyPairs:
    auth: Ed25519PrivateKey
    policy: Ed25519PrivateKey

    @classmethod
    def in_directory(cls, data_dir: Path) -> KeyPairs:
        """``keys/auth_ed25519.pem`` and ``keys/policy_ed25519.pem``, created on first use."""
        keys = private_directory(private_directory(data_dir) / "keys")
        return cls(
            auth=load_or_create_private_key(keys / "auth_ed25519.pem"),
            policy=load_or_create_private_key(keys / "policy_ed25519.pem"),
        )


def write_state_file(
    data_dir: Path, *, url: str, token: str, user_id: str, policy_keys: PolicyKeySet, started_at: datetime
) -> Path:
    path = data_dir / STATE_FILE
    state = {
        "url": url,
        "token": token,
        "pid": os.getpid(),
        "tenantId": LOCAL_TENANT,
        "userId": user_id,
        "policyKeys": policy_keys.to_wire()["keys"],
        "startedAt": started_at.isoformat(),
    }
    write_atomically(path, json.dumps(state, indent=2).encode())
    return path


def remove_state_file(data_dir: Path) -> None:
    path = data_dir / STATE_FILE
    with contextlib.suppress(OSError, ValueError):
        # Only our own: a second server on the same directory may have written it since.
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
