"""The runtime's end of the Session Service's server push (wire: :mod:`contracts.rest.push`).

One :class:`PushChannel` per session, running beside it until the session ends:

* **WebSocket** ``/sessions/{id}/push`` on the backend's origin (``ws://`` for the loopback backend,
  ``wss://`` otherwise), the bearer token in the upgrade request's ``Authorization`` header — never in
  the URL. The server's heartbeat comes every ``heartbeatSeconds``; a connection silent for two of them
  plus a margin is taken for dead and opened again. A dropped connection is opened again with
  exponential backoff and full jitter (:meth:`~contracts.retry.RetryPolicy.delay`).
* **Polling** ``GET /sessions/{id}/policy-status`` when the WebSocket cannot be opened (a proxy that
  does not pass upgrades, a backend serving without them): every ``pollSeconds`` the server suggests
  (or ``COWORK_PUSH_POLL_S``), trying the WebSocket again every :attr:`PushSettings.websocket_retry_s`.

Either way the session hears the same three things, in order, each once: :class:`PolicyChanged` (with
the new bundle over the WebSocket; without one from polling — fetch it), :class:`PolicyRevoked` and
:class:`SessionStop`. After a stop, or when the server refuses the token or does not know the session,
the channel ends (the session goes on without push; its policy still expires on time).

``COWORK_PUSH``: ``auto`` (default: WebSocket, polling as the fallback), ``poll`` (polling only) or
``off``. The ``websockets`` library is imported when the first connection is opened, never on the
runtime's path to "ready".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random as random_module
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import TypeAdapter, ValidationError

from agent_runtime.agent_host.llm.config import RetrySettings
from agent_runtime.agent_host.tls import tls_context
from contracts.errors import CoworkError
from contracts.rest.push import (
    CLOSE_NOT_FOUND,
    CLOSE_UNAUTHORIZED,
    PolicyChanged,
    PolicyRevoked,
    PushError,
    PushHello,
    PushMessage,
    SessionPushStatus,
    SessionStop,
)

from .client import USER_AGENT, BackendClient
from .config import BackendConfig

__all__ = ["MODE_VARIABLE", "POLL_VARIABLE", "PushChannel", "PushEvent", "PushMode", "PushSettings"]

logger = logging.getLogger(__name__)

MODE_VARIABLE: Final = "COWORK_PUSH"
POLL_VARIABLE: Final = "COWORK_PUSH_POLL_S"

PushEvent = PolicyChanged | PolicyRevoked | SessionStop
Deliver = Callable[[PushEvent], Awaitable[None]]

_MESSAGES: TypeAdapter[Any] = TypeAdapter(PushMessage)
_BACKOFF = RetrySettings(base_s=0.5, cap_s=30.0)
"""Between attempts to open the WebSocket again after it dropped."""


class PushMode(StrEnum):
    AUTO = "auto"
    POLL = "poll"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class PushSettings:
    mode: PushMode = PushMode.AUTO
    poll_s: float | None = None
    """The polling interval; None: what the server suggests (``pollSeconds``)."""
    websocket_retry_s: float = 60.0
    """While polling, how often the WebSocket is tried again."""
    open_timeout_s: float = 10.0
    heartbeat_margin_s: float = 5.0
    """A connection silent for two heartbeats and this long is taken for dead."""
    backoff: RetrySettings = _BACKOFF

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> PushSettings:
        """``COWORK_PUSH`` and ``COWORK_PUSH_POLL_S``; a value that cannot be used is logged and the
        default taken (the push is a convenience: a session never fails to start over it)."""
        mode = PushMode.AUTO
        text = environ.get(MODE_VARIABLE, "").strip().lower()
        if text:
            try:
                mode = PushMode(text)
            except ValueError:
                logger.warning("%s=%r is not auto, poll or off; using auto", MODE_VARIABLE, text)
        poll: float | None = None
        raw = environ.get(POLL_VARIABLE, "").strip()
        if raw:
            try:
                poll = float(raw)
            except ValueError:
                poll = math.nan
            if not 0.05 <= poll <= 3600:
                logger.warning("%s=%r is not 0.05-3600 seconds; using the server's", POLL_VARIABLE, raw)
                poll = None
        return cls(mode=mode, poll_s=poll)


_Outcome = Literal["ended", "dropped", "unavailable"]


class PushChannel:
    """Delivers the push of one session to ``deliver`` (awaited: one event at a time, in order)."""

    def __init__(
        self,
        config: BackendConfig,
        client: BackendClient,
        session_id: str,
        deliver: Deliver,
        *,
        settings: PushSettings | None = None,
        random: Callable[[], float] = random_module.random,
    ) -> None:
        self._config = config
        self._client = client
        self._session_id = session_id
        self._deliver = deliver
        self._settings = settings or PushSettings()
        self._random = random
        self._told: tuple[int, bool, bool] | None = None
        """What polling last delivered: (policy version, revoked, stopped)."""
        self._poll_s = 5.0
        self._task: asyncio.Task[None] | None = None
        self._fell_back = False
        self.transport: Literal["websocket", "poll"] | None = None
        """How the channel hears the server now (for logs and tests)."""

    @property
    def url(self) -> str:
        base = self._config.url.rstrip("/")
        scheme, rest = base.split("://", 1)
        return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/sessions/{self._session_id}/push"

    def start(self) -> None:
        if self._settings.mode is PushMode.OFF or self._task is not None:
            return
        self._task = asyncio.create_task(self._run(), name=f"push-{self._session_id}")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is asyncio.current_task():
            return  # closed by what it delivered (a stop): it ends by itself after delivering
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ------------------------------------------------------------------ the loop

    async def _run(self) -> None:
        try:
            if self._settings.mode is PushMode.POLL:
                await self._poll(until=None)
                return
            drops = 0
            while True:
                outcome = await self._websocket()
                if outcome == "ended":
                    return
                if outcome == "dropped":
                    drops += 1
                    await asyncio.sleep(self._settings.backoff.delay(drops, self._random))
                    continue
                drops = 0
                if await self._poll(until=self._settings.websocket_retry_s):
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            # Never the session's end: it goes on without push (its bundle still expires on time).
            logger.exception("the server push of session %s stopped", self._session_id)

    async def _websocket(self) -> _Outcome:
        """One connection, from opening to its end."""
        try:
            from websockets.asyncio.client import connect
            from websockets.exceptions import ConnectionClosed, InvalidHandshake
        except ImportError:  # a runtime built without it still hears the push, by polling
            if not self._fell_back:
                logger.warning("the websockets library is missing: the server push is polled")
            self._fell_back = True
            return "unavailable"

        loopback = self._config.loopback
        url = self.url
        try:
            connection = await connect(
                url,
                additional_headers={"Authorization": f"Bearer {self._config.token}"},
                user_agent_header=USER_AGENT,
                proxy=None if loopback else True,
                ssl=tls_context(self._config.url, trust_env=not loopback) if url.startswith("wss:") else None,
                open_timeout=self._settings.open_timeout_s,
                max_size=4 * 1024 * 1024,
            )
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            # Said once a session: a backend behind a proxy that never passes upgrades fails every time.
            (logger.info if self._fell_back else logger.warning)(
                "the server push of %s cannot use a WebSocket (%s): polling instead", self._session_id, exc
            )
            self._fell_back = True
            return "unavailable"
        self.transport = "websocket"
        opened = False
        async with connection:
            heartbeat_s = 30.0
            try:
                while True:
                    async with asyncio.timeout(2 * heartbeat_s + self._settings.heartbeat_margin_s):
                        raw = await connection.recv()
                    message = self._parse(raw)
                    if isinstance(message, PushHello):
                        opened = True
                        heartbeat_s = message.heartbeat_seconds
                    elif isinstance(message, PushError):
                        logger.warning(
                            "the Session Service refused the push of %s: %s",
                            self._session_id,
                            message.error.message,
                        )
                    elif isinstance(message, PolicyChanged | PolicyRevoked | SessionStop):
                        await self._deliver(message)
                        if isinstance(message, SessionStop):
                            return "ended"
            except TimeoutError:
                logger.info("the push of %s fell silent; connecting again", self._session_id)
                return "dropped"
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                if code in (CLOSE_UNAUTHORIZED, CLOSE_NOT_FOUND, 1000):
                    # The token is refused, the session is unknown, or it has ended: nothing to hear.
                    return "ended"
                # A connection that never said hello was not really open: poll rather than spin.
                return "dropped" if opened else "unavailable"

    async def _poll(self, *, until: float | None) -> bool:
        """Poll for ``until`` seconds (None: for good); whether the session was stopped."""
        self.transport = "poll"
        loop = asyncio.get_running_loop()
        deadline = None if until is None else loop.time() + until
        while deadline is None or loop.time() < deadline:
            try:
                status = await self._client.session_push_status(self._session_id)
            except CoworkError as exc:
                logger.info("policy status of %s not read: %s", self._session_id, exc.shape.message)
            else:
                self._poll_s = status.poll_seconds
                if await self._told_by(status):
                    return True
            await asyncio.sleep(self._settings.poll_s or self._poll_s)
        return False

    async def _told_by(self, status: SessionPushStatus) -> bool:
        told = (status.policy_version, status.policy_revoked, status.stopped)
        if told == self._told:
            return False
        self._told = told
        if status.stopped:
            await self._deliver(SessionStop(session_id=self._session_id, reason=status.stop_reason))
            return True
        if status.policy_revoked:
            await self._deliver(
                PolicyRevoked(
                    session_id=self._session_id,
                    policy_version=status.policy_version,
                    reason=status.revocation_reason,
                )
            )
        elif status.policy_changed:
            await self._deliver(
                PolicyChanged(session_id=self._session_id, policy_version=status.policy_version)
            )
        return False

    def _parse(self, raw: str | bytes) -> object:
        try:
            return _MESSAGES.validate_json(raw)
        except ValidationError:
            # A message a newer server sends that this runtime does not know: not a reason to hang up.
            logger.info("an unknown push message for %s was ignored", self._session_id)
            return None
