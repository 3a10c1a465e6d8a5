"""Where tokens and the registered client are kept, per MCP server: the OS keychain (keyring), or
memory. Never a file, never a log line.

In the keychain, the tokens live under the service ``Cowork MCP tokens`` and the registered client
under ``Cowork MCP client``, each with the server's canonical URL as the account (the desktop's
convention: ``Cowork LLM gateway``/``Cowork backend`` with the endpoint as the account). A value
longer than Windows Credential Manager holds (2560 bytes, 1280 UTF-16 characters; access tokens
from some identity providers are longer) is split over ``<url>#1``, ``<url>#2``… with the account
itself holding ``chunks:<n>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Protocol

from agent_runtime.tool_runtime.mcp.oauth.models import ClientInfo, OAuthToken
from agent_runtime.tool_runtime.mcp.oauth.urls import canonical_resource

__all__ = [
    "CLIENT_KEYRING_SERVICE",
    "TOKENS_KEYRING_SERVICE",
    "KeyringTokenStore",
    "MemoryTokenStore",
    "TokenStore",
    "keyring_token_store",
    "memory_token_store",
]

logger = logging.getLogger(__name__)

TOKENS_KEYRING_SERVICE = "Cowork MCP tokens"
CLIENT_KEYRING_SERVICE = "Cowork MCP client"
_CHUNK_CHARS = 1000
_CHUNKED = "chunks:"


class TokenStore(Protocol):
    """The tokens and the registered client of one MCP server."""

    async def get_tokens(self) -> OAuthToken | None: ...

    async def set_tokens(self, tokens: OAuthToken) -> None: ...

    async def get_client_info(self) -> ClientInfo | None: ...

    async def set_client_info(self, info: ClientInfo) -> None: ...


class MemoryTokenStore:
    """Tokens for the life of the process (the probe, tests)."""

    def __init__(self) -> None:
        self._tokens: OAuthToken | None = None
        self._client: ClientInfo | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._tokens = tokens

    async def get_client_info(self) -> ClientInfo | None:
        return self._client

    async def set_client_info(self, info: ClientInfo) -> None:
        self._client = info


class KeyringTokenStore:
    """Tokens in the OS keychain. When the keychain cannot be used (none on this machine, or it is
    locked) they are kept in memory for this run only, with a warning: never written to a file."""

    def __init__(self, server_url: str) -> None:
        self.account = canonical_resource(server_url)
        self._fallback = MemoryTokenStore()
        self._warned = False

    async def get_tokens(self) -> OAuthToken | None:
        value = await self._read(TOKENS_KEYRING_SERVICE)
        if value is None:
            return await self._fallback.get_tokens()
        return OAuthToken.from_json(_loads(value))

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self._fallback.set_tokens(tokens)
        await self._write(TOKENS_KEYRING_SERVICE, json.dumps(tokens.to_json(), separators=(",", ":")))

    async def get_client_info(self) -> ClientInfo | None:
        value = await self._read(CLIENT_KEYRING_SERVICE)
        if value is None:
            return await self._fallback.get_client_info()
        return ClientInfo.from_json(_loads(value))

    async def set_client_info(self, info: ClientInfo) -> None:
        await self._fallback.set_client_info(info)
        await self._write(CLIENT_KEYRING_SERVICE, json.dumps(info.to_json(), separators=(",", ":")))

    async def forget(self) -> None:
        """Remove this server's tokens and registered client from the keychain (signing out)."""
        self._fallback = MemoryTokenStore()
        for service in (TOKENS_KEYRING_SERVICE, CLIENT_KEYRING_SERVICE):
            await asyncio.to_thread(self._delete_sync, service)

    async def _read(self, service: str) -> str | None:
        return await asyncio.to_thread(self._read_sync, service)

    async def _write(self, service: str, value: str) -> None:
        await asyncio.to_thread(self._write_sync, service, value)

    # The keyring calls block (D-Bus, Keychain Services, Credential Manager): run in a thread.

    def _read_sync(self, service: str) -> str | None:
        import keyring  # imported on use: its backends are probed on import, which costs start time
        from keyring.errors import KeyringError

        try:
            head = keyring.get_password(service, self.account)
            if head is None or not head.startswith(_CHUNKED):
                return head
            parts = [keyring.get_password(service, f"{self.account}#{i}") for i in range(1, _count(head) + 1)]
        except KeyringError as exc:
            self._warn(f"could not read the OS keychain ({type(exc).__name__})")
            return None
        if any(part is None for part in parts):
            return None
        return "".join(part for part in parts if part is not None)

    def _write_sync(self, service: str, value: str) -> None:
        import keyring
        from keyring.errors import KeyringError

        try:
            previous = keyring.get_password(service, self.account)
            old_parts = _count(previous) if previous and previous.startswith(_CHUNKED) else 0
            if len(value) <= _CHUNK_CHARS:
                keyring.set_password(service, self.account, value)
                new_parts = 0
            else:
                pieces = [value[i : i + _CHUNK_CHARS] for i in range(0, len(value), _CHUNK_CHARS)]
                for index, piece in enumerate(pieces, 1):
                    keyring.set_password(service, f"{self.account}#{index}", piece)
                keyring.set_password(service, self.account, f"{_CHUNKED}{len(pieces)}")
                new_parts = len(pieces)
            for index in range(new_parts + 1, old_parts + 1):
                self._delete_entry(service, f"{self.account}#{index}")
        except KeyringError as exc:
            self._warn(f"could not save to the OS keychain ({type(exc).__name__}); kept for this run only")

    def _delete_sync(self, service: str) -> None:
        import keyring
        from keyring.errors import KeyringError

        try:
            head = keyring.get_password(service, self.account)
            if head is None:
                return
            for index in range(1, (_count(head) if head.startswith(_CHUNKED) else 0) + 1):
                self._delete_entry(service, f"{self.account}#{index}")
            self._delete_entry(service, self.account)
        except KeyringError as exc:
            self._warn(f"could not remove from the OS keychain ({type(exc).__name__})")

    @staticmethod
    def _delete_entry(service: str, account: str) -> None:
        import keyring
        from keyring.errors import PasswordDeleteError

        with contextlib.suppress(PasswordDeleteError):
            keyring.delete_password(service, account)

    def _warn(self, what: str) -> None:
        # The exception's text is left out: a backend may echo what it was given.
        if not self._warned:
            logger.warning("MCP authorization for %s: %s", self.account, what)
            self._warned = True


def _count(head: str) -> int:
    try:
        return max(0, min(int(head[len(_CHUNKED) :]), 1000))
    except ValueError:
        return 0


def _loads(value: str) -> object:
    try:
        return json.loads(value)
    except ValueError:
        return None


def keyring_token_store(server_url: str) -> KeyringTokenStore:
    """The OS keychain's entries for the MCP server at ``server_url``."""
    return KeyringTokenStore(server_url)


def memory_token_store() -> MemoryTokenStore:
    return MemoryTokenStore()
