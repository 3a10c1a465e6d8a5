"""Through real HTTP on 127.0.0.1 (uvicorn in a thread): concurrency on the local and AWS stores, and
limits enforced on the socket before a body is read."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from backend.common.auth import TokenIssuer
from backend.common.settings import Limits, Settings
from backend.storage import Stores
from backend.storage.local import open_local_stores
from tests.backend.conftest import AppFactory
from tests.backend.helpers import PROJECT, BackendClient, serving, upload_body


@pytest.fixture(params=["local", "aws"])
def durable_stores(request: pytest.FixtureRequest, tmp_path: Path, aws_credentials: None) -> Iterator[Stores]:
    if request.param == "local":
        stores = open_local_stores(tmp_path)
        yield stores
        stores.close()
    else:
        yield request.getfixturevalue("shared_aws_stores")


async def test_a_hundred_concurrent_uploads_are_all_stored_intact(
    make_app: AppFactory, issuer: TokenIssuer, durable_stores: Stores
) -> None:
    app = make_app(stores=durable_stores)
    contents = {f"{i}.bin": hashlib.sha256(str(i).encode()).digest() * (64 + i) for i in range(100)}
    with serving(app) as url:
        async with httpx.AsyncClient(
            base_url=url, limits=httpx.Limits(max_connections=100), timeout=60
        ) as http:
            api = BackendClient(http, issuer)
            session = await api.session([PROJECT])
            ws, sess = session["workspaceId"], session["sessionId"]
            responses = await asyncio.gather(
                *(
                    api.call(
                        "POST", f"/workspaces/{ws}/artifacts", json=upload_body(ws, sess, data, name=name)
                    )
                    for name, data in contents.items()
                )
            )
            assert [r.status_code for r in responses] == [201] * 100
            listed = (await api.call("GET", f"/workspaces/{ws}/artifacts")).json()["artifacts"]
            assert {a["artifactName"]: a["sha256"] for a in listed} == {
                name: hashlib.sha256(data).hexdigest() for name, data in contents.items()
            }
            # Every stored object has the uploaded size, whether the repository keeps it inline (the
            # local store: these are small) or the content store holds it; a sample is read back byte
            # for byte over HTTP (moto serves S3 reads slowly, and the sizes account for every object).
            stored = {o.key: o.size for o in durable_stores.content.list(f"{ws}/")}
            for artifact in listed:
                found = durable_stores.workspaces.get_artifact_content("acme", ws, artifact["artifactId"])
                assert found is not None
                record, inline = found
                if inline is not None:
                    stored[record.content_key] = len(inline)
            assert stored == {
                f"{ws}/{a['artifactId']}/{a['sha256']}": len(contents[a["artifactName"]]) for a in listed
            }
            sample = listed[::10]
            fetched = await asyncio.gather(
                *(api.call("GET", f"/workspaces/{ws}/artifacts/{a['artifactId']}/content") for a in sample)
            )
    assert [r.content for r in fetched] == [contents[a["artifactName"]] for a in sample]


def _raw_exchange(
    url: str, request: bytes, then: Callable[[socket.socket], None] | None = None
) -> tuple[int, dict[str, str]]:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        if then is not None:
            then(sock)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        while len(body) < length:
            body += sock.recv(65536)
    return status, json.loads(body)


async def test_an_oversize_upload_is_refused_before_its_body_is_sent(
    make_app: AppFactory, issuer: TokenIssuer
) -> None:
    app = make_app(settings=Settings(limits=Limits(max_artifact_bytes=1024 * 1024)))
    with serving(app) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            api = BackendClient(http, issuer)
            session = await api.session([PROJECT])
        request = (
            f"POST /workspaces/{session['workspaceId']}/artifacts HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {api.token()}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {500 * 1024 * 1024}\r\n\r\n"
        ).encode()
        # Not one byte of the 500 MB body is sent: the answer must come anyway.
        status, body = await asyncio.to_thread(_raw_exchange, url, request)
    assert status == 413
    assert body["code"] == "FILE_TOO_LARGE"


async def test_a_chunked_upload_is_cut_off_once_it_passes_the_limit(
    make_app: AppFactory, issuer: TokenIssuer
) -> None:
    app = make_app(settings=Settings(limits=Limits(max_artifact_bytes=64 * 1024)))
    with serving(app) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            api = BackendClient(http, issuer)
            session = await api.session([PROJECT])
        request = (
            f"POST /workspaces/{session['workspaceId']}/artifacts HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {api.token()}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        ).encode()
        chunk = b" " * 32768

        def send_chunks(sock: socket.socket) -> None:
            for _ in range(8):
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")

        status, body = await asyncio.to_thread(_raw_exchange, url, request, send_chunks)
    assert status == 413
    assert body["code"] == "FILE_TOO_LARGE"


async def test_artifact_content_streams_back_byte_for_byte(
    make_app: AppFactory, issuer: TokenIssuer, tmp_path: Path
) -> None:
    stores = open_local_stores(tmp_path)
    data = bytes(range(256)) * 40_000
    try:
        with serving(make_app(stores=stores)) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as http:
                api = BackendClient(http, issuer)
                session = await api.session([PROJECT])
                ws = session["workspaceId"]
                body = {
                    **upload_body(ws, session["sessionId"]),
                    "contentBase64": base64.b64encode(data).decode(),
                }
                stored = (await api.call("POST", f"/workspaces/{ws}/artifacts", json=body)).json()
                async with http.stream(
                    "GET", f"/workspaces/{ws}/artifacts/{stored['artifactId']}/content", headers=api.headers()
                ) as response:
                    assert response.headers["content-length"] == str(len(data))
                    received = b"".join([chunk async for chunk in response.aiter_raw()])
    finally:
        stores.close()
    assert received == data
