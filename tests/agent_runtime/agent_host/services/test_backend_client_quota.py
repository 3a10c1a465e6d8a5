"""A quota refusal (429 naming ``details.quota``, seed 001 Phase 4) is the backend's answer, not a busy
moment: the client gives it to the caller at once, with the backend's sentence, instead of retrying
it into "unavailable"."""

from __future__ import annotations

import json

import pytest

from agent_runtime.agent_host.services import BackendRejected, BackendUnreachable
from contracts.errors import ErrorCode

from .fakes import Reply, scripted
from .test_backend_client_faults import Sleeps, client_for, create_request, upload


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


SESSIONS = (
    "You already have 3 active sessions, the most this organisation allows per user (sessionsPerUser = 3)."
    " End one of them (close its conversation), or try again in 2 h 5 min, when enough expire."
)


def _refusal(message: str, retryable: bool, **details: object) -> Reply:
    shape = {"code": "RATE_LIMITED", "message": message, "retryable": retryable, "details": details}
    headers = {"retry-after": str(details["retryAfterSeconds"])} if "retryAfterSeconds" in details else {}
    return Reply(status=429, body=json.dumps(shape).encode(), headers=headers)


async def test_a_session_refused_by_a_quota_is_answered_at_once_with_the_backends_words(
    sleeps: Sleeps,
) -> None:
    refusal = _refusal(SESSIONS, True, quota="sessionsPerUser", limit=3, used=3, retryAfterSeconds=7500)
    with scripted(refusal) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendRejected) as caught:
                await client.create_session(create_request())
        assert len(server.received) == 1
    assert sleeps.waited == []
    assert (caught.value.code, caught.value.status, caught.value.message) == (
        ErrorCode.RATE_LIMITED,
        429,
        SESSIONS,
    )
    assert caught.value.retryable
    assert caught.value.shape.details["retryAfterSeconds"] == 7500


async def test_an_upload_refused_for_storage_is_not_retried(sleeps: Sleeps) -> None:
    full = _refusal(
        "Artifact storage for this organisation is full.", False, quota="storageBytes", limit=10, used=9
    )
    with scripted(full) as server:
        async with client_for(server.url, sleeps) as client:
            with pytest.raises(BackendRejected) as caught:
                await client.upload_artifact(upload())
        assert len(server.received) == 1
    assert not caught.value.retryable


async def test_a_429_that_names_no_quota_is_still_a_busy_server_to_retry(sleeps: Sleeps) -> None:
    busy = Reply(
        status=429,
        body=json.dumps({"code": "RATE_LIMITED", "message": "Too many uploads", "retryable": True}).encode(),
        headers={"retry-after": "1"},
    )
    with scripted(busy) as server:
        async with client_for(server.url, sleeps, retries=2) as client:
            with pytest.raises(BackendUnreachable):
                await client.upload_artifact(upload())
        assert len(server.received) == 3
    assert sleeps.waited == [1.0, 1.0]
