"""A conversation's MCP traffic, Qt-free: the runtime's requests for input reach the window's queue and
leave it when resolved, the user's answers go back as ``AnswerElicitation``, a sign-in opens the browser
(only on a web address) with a notice that keeps the address, and ``GetMcpServers`` fills the list."""

from __future__ import annotations

from typing import Any

import pytest

from contracts.errors import ErrorCode, ErrorShape
from contracts.ipc.client_core import RpcCallError
from desktop.conversation.items import Notice, SignInNotice, Tone
from desktop.mcp.elicitations import ElicitationQueue
from tests.desktop.mcp.requests import elicitation, event, server_state
from tests.desktop.mcp.runtime import Runtime, started_session


async def test_a_request_for_input_waits_in_the_queue_until_the_runtime_resolves_it() -> None:
    runtime, queue = Runtime(), ElicitationQueue()
    await started_session(runtime, elicitations=queue)

    runtime.send(event("elicitation_requested", elicitation("eli_1")))
    runtime.send(event("elicitation_requested", elicitation("eli_1")))  # the same one again: kept once
    runtime.send(event("elicitation_requested", elicitation("eli_2")))
    assert [p.elicitation_id for p in queue.pending()] == ["eli_1", "eli_2"]
    assert queue.pending()[0].session_id == "sess_1"

    runtime.send(
        event("elicitation_resolved", {"elicitationId": "eli_1", "action": "cancel", "timedOut": True})
    )
    assert [p.elicitation_id for p in queue.pending()] == ["eli_2"]


async def test_a_request_without_an_id_is_not_queued() -> None:
    runtime, queue = Runtime(), ElicitationQueue()
    await started_session(runtime, elicitations=queue)
    runtime.send(event("elicitation_requested", elicitation(elicitationId="")))
    assert len(queue) == 0


async def test_a_closed_conversation_takes_its_requests_with_it() -> None:
    runtime, queue = Runtime({"Shutdown": {"sessionStatus": "SESSION_COMPLETED"}}), ElicitationQueue()
    session = await started_session(runtime, elicitations=queue)
    runtime.send(event("elicitation_requested", elicitation("eli_1")))
    await session.close()
    assert len(queue) == 0


@pytest.mark.parametrize(
    ("action", "content", "sent"),
    [
        ("accept", {"email": "ada@example.org", "seats": 2}, {"email": "ada@example.org", "seats": 2}),
        ("accept", {}, {}),
        ("decline", None, None),
        ("cancel", None, None),
    ],
)
async def test_each_answer_goes_to_the_runtime_as_answer_elicitation(
    action: str, content: dict[str, Any] | None, sent: dict[str, Any] | None
) -> None:
    runtime = Runtime({"AnswerElicitation": {"accepted": True}})
    session = await started_session(runtime, elicitations=ElicitationQueue())

    assert await session.answer_elicitation("eli_1", action, content) is True

    expected: dict[str, Any] = {"sessionId": "sess_1", "elicitationId": "eli_1", "action": action}
    if sent is not None:
        expected["content"] = sent
    assert runtime.calls[-1] == ("AnswerElicitation", expected)


async def test_an_answer_that_came_too_late_is_said_in_the_conversation() -> None:
    runtime = Runtime({"AnswerElicitation": {"accepted": False}})
    session = await started_session(runtime, elicitations=ElicitationQueue())

    assert await session.answer_elicitation("eli_1", "accept", {"x": 1}) is False

    notice = session.state.items[-1]
    assert isinstance(notice, Notice)
    assert notice.tone is Tone.WARNING
    assert "no longer waiting" in notice.text


async def test_an_answer_the_runtime_refuses_comes_back_to_the_user_with_what_they_entered() -> None:
    refusal = ErrorShape(
        code=ErrorCode.INVALID_REQUEST, message="content seats must be at most 8", retryable=False
    )
    runtime = Runtime({"AnswerElicitation": RpcCallError(-32602, "Invalid params", refusal)})
    queue = ElicitationQueue()
    session = await started_session(runtime, elicitations=queue)
    runtime.send(event("elicitation_requested", elicitation("eli_1", timeoutSeconds=100)))
    first = queue.pending()[0]
    queue.discard("eli_1")  # the dialog takes it out as it sends the answer

    assert await session.answer_elicitation("eli_1", "accept", {"name": "Ada", "seats": 9}) is False

    again = queue.pending()
    assert [p.elicitation_id for p in again] == ["eli_1"]
    assert again[0].refusal == "seats must be at most 8"
    assert again[0].entered == {"name": "Ada", "seats": 9}
    assert again[0].received_at == first.received_at  # its time keeps running from when it came

    runtime.send(
        event("elicitation_resolved", {"elicitationId": "eli_1", "action": "cancel", "timedOut": True})
    )
    assert len(queue) == 0
    runtime.answers["AnswerElicitation"] = RpcCallError(-32602, "Invalid params", refusal)
    with pytest.raises(RpcCallError):  # no longer waiting: nothing to give back
        await session.answer_elicitation("eli_1", "accept", {"seats": 9})


async def test_a_sign_in_opens_the_browser_and_keeps_the_address_in_the_conversation() -> None:
    opened: list[str] = []
    runtime = Runtime()
    session = await started_session(runtime, open_url=lambda url: bool(opened.append(url)) or True)
    url = "https://auth.example.com/authorize?client_id=c&state=s"

    runtime.send(event("mcp_authorization_required", {"serverName": "tickets", "authorizationUrl": url}))

    assert opened == [url]
    notice = session.state.items[-1]
    assert isinstance(notice, SignInNotice)
    assert (notice.server_name, notice.url, notice.opened, notice.problem) == ("tickets", url, True, "")


async def test_when_the_browser_cannot_be_opened_the_notice_says_so() -> None:
    runtime = Runtime()
    session = await started_session(runtime, open_url=lambda url: False)
    runtime.send(
        event(
            "mcp_authorization_required",
            {"serverName": "tickets", "authorizationUrl": "https://auth.example.com/authorize"},
        )
    )
    notice = session.state.items[-1]
    assert isinstance(notice, SignInNotice)
    assert not notice.opened
    assert "could not open your browser" in notice.problem


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "ms-settings:privacy",
        "http://auth.example.com/authorize",  # plain http beyond this computer
        "https://user:secret@auth.example.com/authorize",
        "https://auth.example.com/authorize?x=1\nset-cookie",
        "",
    ],
)
async def test_an_address_that_is_not_a_sign_in_page_is_never_handed_to_the_system(url: str) -> None:
    opened: list[str] = []
    runtime = Runtime()
    session = await started_session(runtime, open_url=lambda u: bool(opened.append(u)) or True)
    runtime.send(event("mcp_authorization_required", {"serverName": "tickets", "authorizationUrl": url}))
    assert opened == []
    notice = session.state.items[-1]
    assert isinstance(notice, SignInNotice)
    assert not notice.opened
    assert "did not open" in notice.problem or "gave no address" in notice.problem


async def test_a_local_test_server_on_loopback_may_be_opened_over_http() -> None:
    opened: list[str] = []
    runtime = Runtime()
    await started_session(runtime, open_url=lambda u: bool(opened.append(u)) or True)
    for url in ("http://127.0.0.1:8123/authorize", "http://localhost:9/a", "http://[::1]:9/a"):
        runtime.send(event("mcp_authorization_required", {"serverName": "dev", "authorizationUrl": url}))
    assert len(opened) == 3


async def test_get_mcp_servers_fills_the_list_and_a_failure_is_kept_for_settings() -> None:
    answers: list[Any] = [
        {"servers": [server_state("tickets"), server_state("weather", "unavailable", lastError="refused")]},
        RpcCallError(-32601, "Method not found", None),
    ]
    runtime = Runtime({"GetMcpServers": lambda params: _next(answers)})
    session = await started_session(runtime)
    servers = session.state.mcp_servers

    await session.refresh_mcp_servers()
    assert runtime.calls[-1] == ("GetMcpServers", {"sessionId": "sess_1"})
    assert [(row.name, row.state_text, row.last_error) for row in servers.rows] == [
        ("tickets", "Connected", ""),
        ("weather", "Unavailable", "refused"),
    ]
    assert servers.loaded

    await session.refresh_mcp_servers()  # an older runtime without the method
    assert servers.problem == "This conversation's agent runtime does not support MCP servers."
    assert [row.name for row in servers.rows] == ["tickets", "weather"]  # the last list stays


def _next(answers: list[Any]) -> Any:
    answer = answers.pop(0)
    if isinstance(answer, BaseException):
        raise answer
    return answer
