"""Where tokens go: the OS keychain (here a recording keyring backend), read back by the next run;
never a file, never a log line or an error message."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import keyring
import pytest
from keyring.backends import fail

from agent_runtime.tool_runtime.mcp.errors import McpAuthorizationError
from agent_runtime.tool_runtime.mcp.oauth import (
    CLIENT_KEYRING_SERVICE,
    TOKENS_KEYRING_SERVICE,
    ClientInfo,
    OAuthToken,
    keyring_token_store,
    oauth_auth,
)
from tests.support.mcp_oauth_server import OAuthServerOptions, OAuthTestServer, RecordingKeyring


@pytest.fixture
def keychain() -> Iterator[RecordingKeyring]:
    previous = keyring.get_keyring()
    recording = RecordingKeyring()
    keyring.set_keyring(recording)
    try:
        yield recording
    finally:
        keyring.set_keyring(previous)


# Files opened for writing while a test watches (an audit hook cannot be removed, so it is installed
# once and only records while a list is set).
_writes: list[str] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _writes is None or event != "open":
        return
    path, mode, flags = args
    if not isinstance(path, str | bytes | os.PathLike) or "__pycache__" in os.fsdecode(path):
        return
    writing = (
        any(letter in mode for letter in "wax+")
        if isinstance(mode, str)
        else isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
    )
    if writing:
        _writes.append(os.fsdecode(path))


sys.addaudithook(_audit)


@pytest.fixture
def file_writes(tmp_path: Path) -> Iterator[list[str]]:
    # tmp_path first: pytest's own bookkeeping for it writes a lock file.
    global _writes
    _writes = []
    try:
        yield _writes
    finally:
        _writes = None


def auth_for(server: OAuthTestServer) -> httpx.Auth:
    return oauth_auth(
        server.mcp_url,
        store=keyring_token_store(server.mcp_url),
        prompt=None,
        headless=True,
        allow_insecure_loopback=True,
    )


async def fetch(auth: httpx.Auth, server: OAuthTestServer, *, needs: str | None = None) -> httpx.Response:
    async with httpx.AsyncClient(auth=auth, timeout=30) as client:
        return await client.get(server.mcp_url, headers={"X-Needs-Scope": needs} if needs else {})


async def test_tokens_and_the_client_go_to_the_keychain_and_the_next_run_reads_them(
    keychain: RecordingKeyring,
) -> None:
    options = OAuthServerOptions(token_auth_methods=["client_secret_post"])
    with OAuthTestServer(options) as server:
        assert (await fetch(auth_for(server), server)).status_code == 200
        tokens = keychain.entries[(TOKENS_KEYRING_SERVICE, server.mcp_url)]
        client = keychain.entries[(CLIENT_KEYRING_SERVICE, server.mcp_url)]
        assert server.issued_access_tokens()[0] in tokens
        assert ("set", TOKENS_KEYRING_SERVICE, server.mcp_url) in keychain.calls

        # A new process: a fresh auth and store, the same keychain.
        assert (await fetch(auth_for(server), server)).status_code == 200
    assert len(server.records.authorizations) == 1
    assert len(server.records.registrations) == 1
    info = ClientInfo.from_json(json.loads(client))
    assert info is not None
    assert info.token_endpoint_auth_method == "client_secret_post"
    assert info.client_secret is not None


async def test_no_token_reaches_a_file_a_log_line_or_an_error_message(
    keychain: RecordingKeyring,
    file_writes: list[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.chdir(tmp_path)
    options = OAuthServerOptions(
        token_auth_methods=["client_secret_basic"],
        challenge_scope="files:read",
        grantable_scopes={"files:read", "files:write"},
    )
    errors: list[BaseException] = []
    with OAuthTestServer(options) as server:
        auth = auth_for(server)
        assert (await fetch(auth, server)).status_code == 200
        server.revoke_access_tokens()
        assert (await fetch(auth, server)).status_code == 200  # refreshed
        assert (await fetch(auth, server, needs="files:write")).status_code == 200  # stepped up
        with pytest.raises(McpAuthorizationError) as raised:
            await fetch(auth, server, needs="admin")
        errors.append(raised.value)
    assert {kind for kind, _ in server.issued} == {"code", "access", "refresh", "secret"}

    assert file_writes == []
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]

    def leaks(text: str, kinds: set[str]) -> list[str]:
        return [kind for kind, value in server.issued if kind in kinds and value in text]

    credentials = {"access", "refresh", "secret"}
    for record in caplog.records:
        text = record.getMessage() + (record.exc_text or "")
        # At every level, from every library: no token and no client secret.
        assert not leaks(text, credentials), record.getMessage()
        # Our own log lines, and anything at INFO or above, carry no authorization code either.
        if record.name.startswith("agent_runtime") or record.levelno >= logging.INFO:
            assert not leaks(text, {"code"}), record.getMessage()
    for error in errors:
        chain: BaseException | None = error
        while chain is not None:
            assert not leaks(str(chain) + repr(chain), credentials | {"code"})
            chain = chain.__cause__ or chain.__context__
    stored = OAuthToken.from_json(json.loads(keychain.entries[(TOKENS_KEYRING_SERVICE, server.mcp_url)]))
    assert stored is not None
    assert stored.access_token not in repr(stored)
    assert stored.refresh_token is not None
    assert stored.refresh_token not in repr(stored)


async def test_without_a_usable_keychain_tokens_last_for_the_run_and_touch_no_file(
    file_writes: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        with OAuthTestServer() as server:
            auth = auth_for(server)
            assert (await fetch(auth, server)).status_code == 200
            assert (await fetch(auth, server)).status_code == 200
    finally:
        keyring.set_keyring(previous)
    assert len(server.records.authorizations) == 1
    assert file_writes == []
    assert any("OS keychain" in record.getMessage() for record in caplog.records)


async def test_values_too_long_for_one_keychain_entry_are_split_and_joined(
    keychain: RecordingKeyring,
) -> None:
    store = keyring_token_store("https://mcp.example.com/mcp")
    long_token = OAuthToken(access_token="a" * 2500, refresh_token="r" * 900, scope="x", expires_at=1.5)
    await store.set_tokens(long_token)
    account = "https://mcp.example.com/mcp"
    assert keychain.entries[(TOKENS_KEYRING_SERVICE, account)] == "chunks:4"
    assert all(len(value) <= 1000 for value in keychain.entries.values())
    assert await keyring_token_store(account).get_tokens() == long_token

    short = OAuthToken(access_token="short")
    await store.set_tokens(short)
    assert await keyring_token_store(account).get_tokens() == short
    assert [key for key in keychain.entries if key[0] == TOKENS_KEYRING_SERVICE] == [
        (TOKENS_KEYRING_SERVICE, account)
    ]

    await store.set_client_info(ClientInfo(client_id="c", client_secret="s"))
    await store.forget()
    assert keychain.entries == {}


async def test_damaged_keychain_entries_are_ignored(keychain: RecordingKeyring) -> None:
    account = "https://mcp.example.com/mcp"
    keychain.entries[(TOKENS_KEYRING_SERVICE, account)] = "{not json"
    keychain.entries[(CLIENT_KEYRING_SERVICE, account)] = '{"client_id": 5}'
    store = keyring_token_store(account)
    assert await store.get_tokens() is None
    assert await store.get_client_info() is None
    keychain.entries[(TOKENS_KEYRING_SERVICE, account)] = "chunks:2"
    keychain.entries[(TOKENS_KEYRING_SERVICE, account + "#1")] = '{"access_token":'
    assert await store.get_tokens() is None  # a missing part
