"""Fixtures for the backend tests: keys, a movable clock, an app over the memory store and a client;
and the AWS store on moto's server mode — a real HTTP endpoint on 127.0.0.1, started once per run."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fastapi import FastAPI
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.server import ThreadedMotoServer
from werkzeug.serving import make_server

from backend.apps import create_app
from backend.common.auth import TokenIssuer, TokenVerifier
from backend.common.settings import Settings
from backend.storage import Stores
from backend.storage.aws import AwsSettings, create_resources, open_aws_stores
from backend.storage.memory import open_memory_stores
from tests.backend.helpers import BackendClient, ManualClock


@dataclass(frozen=True)
class Keys:
    auth: Ed25519PrivateKey
    policy: Ed25519PrivateKey


@pytest.fixture
def keys() -> Keys:
    return Keys(auth=Ed25519PrivateKey.generate(), policy=Ed25519PrivateKey.generate())


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def issuer(keys: Keys, clock: ManualClock) -> TokenIssuer:
    return TokenIssuer(keys.auth, clock)


AppFactory = Callable[..., FastAPI]


@pytest.fixture
def make_app(keys: Keys, clock: ManualClock) -> AppFactory:
    """``make_app(stores=…, settings=…, policies=…, …)``: an app with the test's keys and clock."""

    def make(stores: Stores | None = None, **options: Any) -> FastAPI:
        return create_app(
            stores or open_memory_stores(),
            verifier=TokenVerifier([keys.auth.public_key()], clock),
            policy_key=keys.policy,
            clock=clock,
            **options,
        )

    return make


@pytest.fixture
def stores() -> Stores:
    """The memory store behind ``app``, to look at what requests stored."""
    return open_memory_stores()


@pytest.fixture
def app(make_app: AppFactory, stores: Stores) -> FastAPI:
    return make_app(stores=stores, settings=Settings())


@pytest.fixture
async def api(app: FastAPI, issuer: TokenIssuer) -> AsyncIterator[BackendClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://backend") as http:
        yield BackendClient(http, issuer, app)


# ---------------------------------------------------------------------------------------------- AWS (moto)


class _AtomicMotoServer(ThreadedMotoServer):
    """moto's threaded server, handling one AWS request at a time.

    DynamoDB evaluates every conditional write atomically; moto's server runs requests on parallel
    threads and does not, so two racing conditional writes could both pass their condition. Serving
    requests one at a time restores the guarantee the AWS store relies on (and that the concurrency
    tests check), while connections stay concurrent and keep-alive.
    """

    def _server_entry(self) -> None:
        lock = threading.Lock()
        dispatcher = DomainDispatcherApplication(create_backend_app)

        def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            with lock:
                return list(dispatcher(environ, start_response))

        self._server = make_server(
            self._ip_address, self._port, app, True, request_handler=MotoRequestHandler
        )
        self._server_ready_event.set()
        self._server.serve_forever()


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    # moto logs every request through werkzeug.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = _AtomicMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials for moto (the test-wide guard removes real ones first)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")


def fresh_aws_settings(endpoint: str) -> AwsSettings:
    settings = AwsSettings(env_prefix=f"t{uuid.uuid4().hex[:10]}", endpoint_url=endpoint)
    create_resources(settings)
    return settings


@pytest.fixture(scope="session")
def shared_aws_stores(moto_endpoint: str) -> Iterator[Stores]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "testing")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        stores = open_aws_stores(fresh_aws_settings(moto_endpoint))
    try:
        yield stores
    finally:
        stores.close()
