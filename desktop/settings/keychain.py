"""Whether an OS keychain can keep a token, asked before the user types one. Qt-free.

keyring falls back to its ``fail`` backend (every call raises) when no keychain is found — a Linux
machine without a Secret Service (GNOME Keyring, KWallet), a container, an SSH session — and the
``null`` backend (nothing is kept) is what ``PYTHON_KEYRING_BACKEND`` can choose. Either way a token
typed into the dialog could not be saved; the runtime reads ``LLM_GATEWAY_AUTH_TOKEN`` from the
environment instead (``desktop.launch.gateway.resolve_gateway``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

__all__ = ["TOKEN_VARIABLE", "KeychainStatus", "keychain_status"]

logger = logging.getLogger(__name__)

TOKEN_VARIABLE = "LLM_GATEWAY_AUTH_TOKEN"
"""Where the gateway token comes from when no keychain can keep it."""
_UNUSABLE = {"keyring.backends.fail", "keyring.backends.null"}


@dataclass(frozen=True)
class KeychainStatus:
    usable: bool
    backend: str
    """The backend's name as keyring reports it, or why none could be had."""


def keychain_status() -> KeychainStatus:
    """Which keychain keyring would use, and whether it can keep a token."""
    try:
        import keyring

        backend = keyring.get_keyring()
    except Exception as exc:  # a broken keyring configuration is one more way of having no keychain
        logger.info("no OS keychain: %s", exc)
        return KeychainStatus(usable=False, backend=str(exc) or type(exc).__name__)
    kind = type(backend)
    name = f"{kind.__module__}.{kind.__name__}"
    chained = getattr(backend, "backends", None)
    if kind.__module__ in _UNUSABLE or (chained is not None and not chained):
        return KeychainStatus(usable=False, backend=name)
    return KeychainStatus(usable=True, backend=name)
