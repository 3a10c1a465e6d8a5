"""Peer authentication (contracts.ipc.handshake): proofs, not secrets, cross the wire."""

from __future__ import annotations

import json

import pytest

from contracts.ipc.handshake import (
    SECRET_ENV,
    HandshakeError,
    hello_frame,
    new_secret,
    take_secret,
    verify_hello,
    verify_welcome,
    welcome_frame,
)


def test_both_sides_prove_the_secret_without_sending_it() -> None:
    secret = new_secret()
    hello, nonce = hello_frame(secret)
    assert secret not in hello.decode()
    assert verify_hello(secret, hello.rstrip(b"\n")) == nonce
    welcome = welcome_frame(secret, nonce)
    assert secret not in welcome.decode()
    verify_welcome(secret, nonce, welcome.rstrip(b"\n"))


def test_a_hello_made_with_another_secret_is_refused() -> None:
    hello, _ = hello_frame(new_secret())
    with pytest.raises(HandshakeError, match="does not match"):
        verify_hello(new_secret(), hello)


def test_a_welcome_for_another_nonce_is_refused() -> None:
    secret = new_secret()
    _, nonce = hello_frame(secret)
    _, other_nonce = hello_frame(secret)
    with pytest.raises(HandshakeError):
        verify_welcome(secret, nonce, welcome_frame(secret, other_nonce))


def test_the_runtime_proof_cannot_be_reflected_as_the_desktops() -> None:
    secret = new_secret()
    hello, nonce = hello_frame(secret)
    reflected = json.loads(hello)
    forged = {"jsonrpc": "2.0", "method": "cowork.welcome", "params": {"proof": reflected["params"]["proof"]}}
    with pytest.raises(HandshakeError):
        verify_welcome(secret, nonce, json.dumps(forged).encode())


@pytest.mark.parametrize(
    "params",
    [
        {"protocol": "cowork-ipc/0", "nonce": "0" * 32, "proof": "x"},
        {"protocol": "cowork-ipc/1", "nonce": "short", "proof": "x"},
        {"protocol": "cowork-ipc/1", "nonce": "0" * 32},
        {"protocol": "cowork-ipc/1", "nonce": "0" * 32, "proof": 5},
    ],
)
def test_a_malformed_hello_is_refused(params: dict[str, object]) -> None:
    frame = json.dumps({"jsonrpc": "2.0", "method": "cowork.hello", "params": params}).encode()
    with pytest.raises(HandshakeError):
        verify_hello(new_secret(), frame)


@pytest.mark.parametrize(
    "frame",
    [b"not json", b"[]", b'{"jsonrpc": "2.0", "id": 1, "method": "cowork.hello", "params": {}}'],
)
def test_anything_but_a_hello_notification_is_refused(frame: bytes) -> None:
    with pytest.raises(HandshakeError):
        verify_hello(new_secret(), frame)


def test_taking_the_secret_removes_it_from_the_environment() -> None:
    environ = {SECRET_ENV: "ab" * 32, "PATH": "/bin"}
    assert take_secret(environ) == "ab" * 32
    assert environ == {"PATH": "/bin"}


@pytest.mark.parametrize("value", [None, "", "ab" * 31, "AB" * 32, "zz" * 32])
def test_a_missing_or_malformed_secret_is_refused(value: str | None) -> None:
    environ = {} if value is None else {SECRET_ENV: value}
    with pytest.raises(HandshakeError, match=SECRET_ENV):
        take_secret(environ)
