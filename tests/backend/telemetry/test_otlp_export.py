"""Telemetry exported to an OpenTelemetry collector over OTLP/HTTP: a tiny receiver on loopback
records what the SDK's exporter posts to ``/v1/logs`` (protobuf), and the test reads it back as the
collector would. Also: how the endpoint is configured, and that a backend without one never loads the
SDK."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from starlette.responses import Response

from backend.common.auth import TokenIssuer
from backend.common.config_file import ConfigError, load_settings
from backend.common.settings import Settings
from backend.storage import Stores
from tests.backend.conftest import AppFactory
from tests.backend.helpers import BackendClient, envelope, serving
from tests.support.peers import REPO_ROOT


class Collector:
    """The OTLP/HTTP logs endpoint of a collector, recording every export request."""

    def __init__(self) -> None:
        self.requests: list[ExportLogsServiceRequest] = []
        self.paths: list[str] = []
        self.arrived = threading.Condition()
        self.app = FastAPI()

        @self.app.post("/v1/logs")
        async def logs(request: Request) -> Response:
            body = await request.body()
            if request.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            assert request.headers["content-type"] == "application/x-protobuf"
            exported = ExportLogsServiceRequest()
            exported.ParseFromString(body)
            with self.arrived:
                self.requests.append(exported)
                self.paths.append(request.url.path)
                self.arrived.notify_all()
            answer = ExportLogsServiceResponse().SerializeToString()
            return Response(answer, media_type="application/x-protobuf")

    def records(self) -> list[LogRecord]:
        with self.arrived:
            return [
                record
                for exported in self.requests
                for resource in exported.resource_logs
                for scope in resource.scope_logs
                for record in scope.log_records
            ]

    def wait_for(self, count: int, timeout: float = 20) -> list[LogRecord]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.records()) >= count, timeout)
        return self.records()


@pytest.fixture
def collector() -> Iterator[tuple[Collector, str]]:
    receiver = Collector()
    with serving(receiver.app) as url:
        yield receiver, url


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "kvlist_value":
        return {item.key: _value(item.value) for item in value.kvlist_value.values}
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


def _attributes(record: LogRecord) -> dict[str, Any]:
    return {item.key: _value(item.value) for item in record.attributes}


async def test_each_new_event_reaches_the_collector_as_one_log_record(
    make_app: AppFactory, stores: Stores, issuer: TokenIssuer, collector: tuple[Collector, str]
) -> None:
    receiver, url = collector
    app = make_app(stores=stores, settings=Settings(otlp_endpoint=url))
    llm = envelope(
        "acme",
        "alice",
        eventId="evt_llm",
        eventType="llm_request_completed",
        timestamp="2026-03-02T08:59:58.250Z",
        payload={
            "model": "claude",
            "inputTokens": 1200,
            "outputTokens": 300,
            "latencyMs": 812,
            "cache": {"read": 90, "written": None},
            "retries": [1.5, None, 2],
        },
    )
    failed = envelope("acme", "alice", eventId="evt_tool", severity="error", taskId="task_9")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
        api = BackendClient(http, issuer, app)
        assert (await api.call("POST", "/telemetry/events", json=[llm, failed])).json() == {"accepted": 2}
        # A retried batch is stored once, so it is exported once.
        assert (await api.call("POST", "/telemetry/events", json=[llm, failed])).json() == {"accepted": 0}
    exporter = app.state.backend.telemetry.exporter
    assert exporter.flush(20)
    records = receiver.wait_for(2)
    assert len(records) == 2
    assert set(receiver.paths) == {"/v1/logs"}
    by_name = {record.event_name: record for record in records}
    llm_record = by_name["llm_request_completed"]
    assert llm_record.time_unix_nano == 1_772_441_998_250_000_000
    assert llm_record.observed_time_unix_nano == 1_772_442_000_000_000_000  # the server's clock: 09:00
    assert (llm_record.severity_number, llm_record.severity_text) == (9, "INFO")
    assert _value(llm_record.body) == {
        "model": "claude",
        "inputTokens": 1200,
        "outputTokens": 300,
        "latencyMs": 812,
        "cache": {"read": 90},
        "retries": [1.5, 2],
    }
    assert _attributes(llm_record) == {
        "cowork.event_id": "evt_llm",
        "cowork.tenant_id": "acme",
        "cowork.user_id": "alice",
        "cowork.workspace_id": "ws_1",
        "cowork.session_id": "sess_1",
        "cowork.task_id": "task_001",
        "cowork.component": "LocalAgentHost",
        "cowork.bounded_context": "AgentExecution",
    }
    tool_record = by_name["tool_completed"]
    assert (tool_record.severity_number, tool_record.severity_text) == (17, "ERROR")
    assert _attributes(tool_record)["cowork.task_id"] == "task_9"
    resource = {
        item.key: _value(item.value) for item in receiver.requests[0].resource_logs[0].resource.attributes
    }
    assert resource["service.name"] == "cowork-telemetry"
    # Exported and stored: the store is what makes a retry idempotent.
    assert sorted(r.event_id for r in stores.telemetry.list("acme")) == ["evt_llm", "evt_tool"]
    app.state.backend.close()


async def test_a_collector_that_is_down_costs_ingest_nothing(
    make_app: AppFactory, stores: Stores, issuer: TokenIssuer
) -> None:
    app = make_app(stores=stores, settings=Settings(otlp_endpoint="http://127.0.0.1:9"))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
        api = BackendClient(http, issuer, app)
        response = await asyncio.wait_for(
            api.call("POST", "/telemetry/events", json=envelope("acme", "alice")), 5
        )
    assert response.status_code == 202
    assert len(stores.telemetry.list("acme")) == 1
    app.state.backend.close()


def test_the_served_backend_exports_to_the_endpoint_in_its_environment_and_flushes_on_shutdown(
    tmp_path: Path, collector: tuple[Collector, str]
) -> None:
    receiver, url = collector
    data = tmp_path / "data"
    environment = {**_clean_environment(), "COWORK_OTLP_ENDPOINT": url}
    command = [sys.executable, "-m", "backend.cli", "serve", "--store", "local", "--data-dir", str(data)]
    with subprocess.Popen(
        [*command, "--port", "0"], cwd=REPO_ROOT, env=environment, stdout=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            ready = json.loads(process.stdout.readline())
            state = json.loads((data / "backend.json").read_text())
            body = envelope("local", state["userId"], eventId="evt_served")
            answer = httpx.post(
                f"{ready['url']}/telemetry/events",
                json=body,
                headers={"Authorization": f"Bearer {state['token']}"},
                timeout=10,
            )
            assert answer.status_code == 202
            process.send_signal(signal.SIGTERM)
            assert process.wait(30) == 0
        finally:
            if process.poll() is None:
                process.kill()
    records = receiver.wait_for(1, timeout=5)
    assert [_attributes(r)["cowork.event_id"] for r in records] == ["evt_served"]


def _clean_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("COWORK_", "OTEL_"))}


def test_a_backend_without_an_endpoint_never_imports_the_sdk() -> None:
    probe = (
        "import sys\n"
        "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey\n"
        "from backend.apps import create_app\n"
        "from backend.common.auth import TokenVerifier\n"
        "from backend.common.clock import SystemClock\n"
        "from backend.storage.memory import open_memory_stores\n"
        "key = Ed25519PrivateKey.generate()\n"
        "create_app(open_memory_stores(), verifier=TokenVerifier([key.public_key()], SystemClock()),"
        " policy_key=key)\n"
        "loaded = ('opentelemetry.sdk', 'opentelemetry.exporter')\n"
        "print(sorted(m for m in sys.modules if m.startswith(loaded)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        env=_clean_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip() == "[]", result.stderr


def test_the_endpoint_comes_from_the_environment_over_the_settings_file(tmp_path: Path) -> None:
    (tmp_path / "backend.toml").write_text('[telemetry]\notlpEndpoint = "http://collector:4318"\n')
    assert load_settings(tmp_path, environ={}).otlp_endpoint == "http://collector:4318"
    overridden = load_settings(tmp_path, environ={"COWORK_OTLP_ENDPOINT": "https://otel.example:4318/"})
    assert overridden.otlp_endpoint == "https://otel.example:4318/"
    assert load_settings(None, environ={}).otlp_endpoint is None


@pytest.mark.parametrize(
    "endpoint", ["collector:4318", "ftp://collector", "http://", "http://c:port", "http://c/?q=1"]
)
def test_an_endpoint_that_is_not_a_collector_url_is_refused(tmp_path: Path, endpoint: str) -> None:
    with pytest.raises(ConfigError, match="COWORK_OTLP_ENDPOINT"):
        load_settings(None, environ={"COWORK_OTLP_ENDPOINT": endpoint})
    (tmp_path / "backend.toml").write_text(f'[telemetry]\notlpEndpoint = "{endpoint}"\n')
    with pytest.raises(ConfigError, match=r"\[telemetry\] otlpEndpoint"):
        load_settings(tmp_path, environ={})
