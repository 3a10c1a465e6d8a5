"""Quotas over HTTP (seed 001 Phase 4): each limit refuses with 429 ``RATE_LIMITED``, a message naming
the limit and when to retry, and ``Retry-After`` where waiting helps — and recovers: when a session
ends or expires, at the next UTC day (the test's clock crosses midnight), when storage is freed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.common.auth import TokenIssuer
from backend.common.quota_config import QuotaDirectory
from backend.common.settings import Settings
from backend.common.usage import STORAGE_COUNTER, token_counter
from backend.storage import Stores
from contracts.errors import ErrorCode
from tests.backend.conftest import AppFactory
from tests.backend.helpers import (
    PROJECT,
    BackendClient,
    ManualClock,
    envelope,
    history_upload,
    session_body,
    upload_body,
)


@pytest.fixture
def quotas(tmp_path: Path) -> QuotaDirectory:
    return QuotaDirectory(tmp_path)


@pytest.fixture
async def api(
    make_app: AppFactory, stores: Stores, issuer: TokenIssuer, quotas: QuotaDirectory
) -> AsyncIterator[BackendClient]:
    app = make_app(stores=stores, settings=Settings(), quotas=quotas)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://backend") as http:
        yield BackendClient(http, issuer, app)


def _refusal(response: httpx.Response, quota: str) -> dict[str, Any]:
    assert response.status_code == 429, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"code", "message", "retryable", "details"}
    assert body["code"] == ErrorCode.RATE_LIMITED
    assert body["details"]["quota"] == quota
    assert quota in body["message"]
    return body


def _llm_call(tenant: str, user: str, input_tokens: int, output_tokens: int, **extra: Any) -> dict[str, Any]:
    payload = {"model": "m", "inputTokens": input_tokens, "outputTokens": output_tokens, "latencyMs": 900}
    return envelope(tenant, user, eventType="llm_request_completed", payload={**payload, **extra})


# ---------------------------------------------------------------------------------------------- sessions


async def test_sessions_per_user_refuse_a_third_and_recover_when_one_ends(
    api: BackendClient, quotas: QuotaDirectory, clock: ManualClock
) -> None:
    quotas.write("acme", {"sessionsPerUser": 2})
    first = await api.session([PROJECT])
    clock.advance(minutes=30)
    await api.session()
    refused = await api.call("POST", "/sessions", json=session_body([PROJECT]))
    body = _refusal(refused, "sessionsPerUser")
    # The window frees up when the first one's bundle expires, 8 h after it began.
    assert refused.headers["Retry-After"] == str(int(7.5 * 3600))
    assert body["retryable"] is True
    assert (body["details"]["limit"], body["details"]["used"]) == (2, 2)
    assert body["details"]["retryAfterSeconds"] == 27000
    assert body["details"]["retryAt"] == "2026-03-02T17:00:00.000000Z"
    assert "You already have 2 active sessions" in body["message"]
    assert "7 h 30 min" in body["message"]
    # Another user of the tenant is not held back by alice's sessions.
    assert (await api.call("POST", "/sessions", json=session_body(), user="bob")).status_code == 201
    # Ending one makes room at once.
    await api.call("POST", f"/sessions/{first['sessionId']}/cancel", json={})
    assert (await api.call("POST", "/sessions", json=session_body([PROJECT]))).status_code == 201
    assert (await api.call("POST", "/sessions", json=session_body())).status_code == 429
    # And so does time: past every bundle's expiry, nothing is active any more.
    clock.advance(hours=9)
    assert (await api.call("POST", "/sessions", json=session_body())).status_code == 201


async def test_a_tenant_without_quotas_is_not_limited(api: BackendClient, quotas: QuotaDirectory) -> None:
    quotas.write("globex", {"sessionsPerUser": 0})
    for _ in range(5):
        await api.session()
    refused = await api.call("POST", "/sessions", json=session_body(), tenant="globex")
    body = _refusal(refused, "sessionsPerUser")
    assert "Retry-After" not in refused.headers
    assert body["retryable"] is False


# ---------------------------------------------------------------------------------------------- tokens


async def test_tokens_reported_past_the_daily_limit_refuse_new_work_until_the_next_utc_day(
    api: BackendClient, quotas: QuotaDirectory, clock: ManualClock, stores: Stores
) -> None:
    quotas.write("acme", {"tokensPerDay": 1000})
    clock.moment = datetime(2026, 3, 2, 20, 0, tzinfo=UTC)
    session = await api.session([PROJECT])
    under = await api.call("POST", "/telemetry/events", json=[_llm_call("acme", "alice", 600, 300)])
    assert under.json() == {"accepted": 1}
    # Other events and prompt-cache tokens do not count; the runtime's session budget does not either.
    other = envelope("acme", "alice", payload={"inputTokens": 10_000})
    cached = _llm_call("acme", "alice", 0, 50, cacheReadTokens=90_000)
    over_batch = [other, cached, _llm_call("acme", "alice", 40, 20, sessionTokensUsed=5000)]
    over = await api.call("POST", "/telemetry/events", json=over_batch)
    assert over.status_code == 202
    assert over.json()["accepted"] == 3
    exceeded = over.json()["quotaExceeded"]
    assert (exceeded["code"], exceeded["details"]["quota"]) == ("RATE_LIMITED", "tokensPerDay")
    assert (exceeded["details"]["used"], exceeded["details"]["limit"]) == (1010, 1000)
    # A retried batch is recorded once and counted once.
    again = await api.call("POST", "/telemetry/events", json=over_batch)
    assert again.json()["accepted"] == 0
    assert stores.usage.get("acme", token_counter(clock.now().date())) == 1010

    refused = await api.call("POST", "/sessions", json=session_body())
    body = _refusal(refused, "tokensPerDay")
    assert refused.headers["Retry-After"] == str(4 * 3600)  # 20:00 → 00:00 UTC
    assert "1,010 of its 1,000" in body["message"]
    assert "after 00:00 UTC, in 4 h" in body["message"]
    assert body["details"]["retryAt"] == "2026-03-03T00:00:00.000000Z"
    resumed = await api.call("POST", f"/sessions/{session['sessionId']}/resume", json={})
    _refusal(resumed, "tokensPerDay")
    # Another tenant has its own day.
    assert (await api.call("POST", "/sessions", json=session_body(), tenant="globex")).status_code == 201

    clock.advance(hours=3, minutes=59, seconds=59)
    late = await api.call("POST", "/sessions", json=session_body())
    assert late.headers["Retry-After"] == "1"
    clock.advance(seconds=1)
    assert (await api.call("POST", "/sessions", json=session_body())).status_code == 201
    assert (await api.call("POST", f"/sessions/{session['sessionId']}/resume", json={})).status_code == 200
    fresh = await api.call("POST", "/telemetry/events", json=[_llm_call("acme", "alice", 10, 10)])
    assert fresh.json() == {"accepted": 1}


async def test_tokens_are_counted_even_before_a_limit_is_set(
    api: BackendClient, quotas: QuotaDirectory, clock: ManualClock, stores: Stores
) -> None:
    await api.call("POST", "/telemetry/events", json=[_llm_call("acme", "alice", 700, 400)])
    assert stores.usage.get("acme", token_counter(clock.now().date())) == 1100
    quotas.write("acme", {"tokensPerDay": 1000})
    _refusal(await api.call("POST", "/sessions", json=session_body()), "tokensPerDay")
    quotas.write("acme", {"tokensPerDay": "unlimited"})
    assert (await api.call("POST", "/sessions", json=session_body())).status_code == 201


# ---------------------------------------------------------------------------------------------- storage


async def test_storage_refuses_content_past_the_limit_and_recovers_when_a_workspace_is_deleted(
    api: BackendClient, quotas: QuotaDirectory, stores: Stores
) -> None:
    quotas.write("acme", {"storageBytes": 100})
    session = await api.session([PROJECT])
    ws, sess = session["workspaceId"], session["sessionId"]
    path = f"/workspaces/{ws}/artifacts"
    first = upload_body(ws, sess, b"a" * 60, name="a.txt")
    assert (await api.call("POST", path, json=first)).status_code == 201
    refused = await api.call("POST", path, json=upload_body(ws, sess, b"b" * 60, name="b.txt"))
    body = _refusal(refused, "storageBytes")
    # Waiting frees nothing: no Retry-After, and not retryable.
    assert "Retry-After" not in refused.headers
    assert body["retryable"] is False
    assert body["details"] == {"quota": "storageBytes", "limit": 100, "used": 60, "requestedBytes": 60}
    assert "Delete workspaces" in body["message"]
    # A retry of what is stored adds nothing and is answered as before.
    assert (await api.call("POST", path, json=first)).status_code == 200
    assert (
        await api.call("POST", path, json=upload_body(ws, sess, b"c" * 40, name="c.txt"))
    ).status_code == 201
    assert stores.usage.get("acme", STORAGE_COUNTER) == 100

    assert (await api.call("DELETE", f"/workspaces/{ws}")).status_code == 204
    assert stores.usage.get("acme", STORAGE_COUNTER) == 0
    session = await api.session([PROJECT])
    ws, sess = session["workspaceId"], session["sessionId"]
    stored = await api.call("POST", f"/workspaces/{ws}/artifacts", json=upload_body(ws, sess, b"d" * 90))
    assert stored.status_code == 201


async def test_a_newer_history_snapshot_needs_room_only_for_what_it_adds(
    api: BackendClient, quotas: QuotaDirectory, stores: Stores
) -> None:
    session = await api.session([PROJECT])
    ws, sess = session["workspaceId"], session["sessionId"]
    path = f"/workspaces/{ws}/artifacts"
    small = history_upload(ws, sess, "2026-03-02T08:00:00Z", "short")
    assert (await api.call("POST", path, json=small)).status_code == 201
    used = stores.usage.get("acme", STORAGE_COUNTER)
    quotas.write("acme", {"storageBytes": used + 20})
    longer = history_upload(ws, sess, "2026-03-02T08:30:00Z", "short" + "x" * 10)
    assert (await api.call("POST", path, json=longer)).status_code == 201
    grown = stores.usage.get("acme", STORAGE_COUNTER)
    assert grown == used + 10
    much_longer = history_upload(ws, sess, "2026-03-02T08:45:00Z", "short" + "x" * 40)
    _refusal(await api.call("POST", path, json=much_longer), "storageBytes")
    # An older snapshot stores nothing, so it is never refused.
    older = history_upload(ws, sess, "2026-03-02T07:00:00Z", "x" * 500)
    assert (await api.call("POST", path, json=older)).status_code == 200
    assert stores.usage.get("acme", STORAGE_COUNTER) == grown
