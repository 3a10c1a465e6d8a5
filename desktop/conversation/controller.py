"""The one helper every runtime or backend call from the window goes through. Qt-free.

``CallRunner.run("send the message", work, affects=[send_button])`` starts ``work`` as an asyncio
task it keeps a reference to, disables the controls the call affects until it ends, and hands any
failure to the one :class:`ErrorPresenter` as a :class:`Problem` — a sentence saying what failed and
what to do — instead of letting it vanish in a task nobody awaits.

Whether a control is enabled is decided here only: not while a call that affects it runs, and
otherwise by the condition it was guarded with (``guard(stop_button, lambda: state.busy)``), which
:meth:`CallRunner.refresh` re-evaluates when the conversation's state changes.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from contracts.errors import ErrorCode
from contracts.ipc.client_core import ConnectionClosed, RpcCallError
from desktop.conversation.banners import BannerAction
from desktop.conversation.errors import ConversationError
from desktop.conversation.history_client import BackendUnavailable
from desktop.i18n import translate
from desktop.launch.errors import LaunchError

__all__ = ["CallRunner", "Control", "ErrorPresenter", "Problem", "describe_failure"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Problem:
    title: str
    """What failed: "Could not send the message"."""
    message: str
    """Why, and what to do about it."""
    action: BannerAction | None = None


class ErrorPresenter(Protocol):
    def present(self, problem: Problem, context: object | None) -> None:
        """Show ``problem``; ``context`` is what the call was about (a conversation), if anything."""


class Control(Protocol):
    def setEnabled(self, enabled: bool) -> None: ...


def describe_failure(what: str, exc: BaseException) -> Problem:
    """A failed call as the user should read it. Unexpected failures are logged with their trace."""
    # ``what`` is marked for the catalogue where the call is made (QT_TRANSLATE_NOOP("Errors", …)).
    title = translate("Errors", "Could not {what}").format(what=translate("Errors", what))
    if isinstance(exc, ConversationError):
        return Problem(title, str(exc), exc.action)
    if isinstance(exc, RpcCallError):
        message = exc.data.message if exc.data is not None else exc.rpc_message
        if exc.error_code is ErrorCode.SESSION_EXPIRED:
            return Problem(
                title,
                translate(
                    "Errors", "{message} Continue the conversation in a new session: its history comes along."
                ).format(message=message),
                BannerAction.NEW_SESSION,
            )
        return Problem(title, message)
    if isinstance(exc, ConnectionClosed):
        return Problem(
            title,
            translate("Errors", "The agent runtime is not connected ({problem}).").format(problem=exc),
            BannerAction.RESTART_RUNTIME,
        )
    if isinstance(exc, TimeoutError):
        return Problem(
            title,
            translate("Errors", "No answer came within the time limit; the agent runtime may be stuck."),
        )
    if isinstance(exc, LaunchError):
        return Problem(title, str(exc), BannerAction.SETTINGS)
    if isinstance(exc, BackendUnavailable):
        return Problem(title, str(exc))
    if isinstance(exc, OSError):
        return Problem(title, f"{exc.strerror or exc}.")
    logger.error("%s failed unexpectedly", what, exc_info=exc)
    return Problem(
        title,
        translate("Errors", "Something unexpected went wrong ({problem}). The logs have the details.").format(
            problem=f"{type(exc).__name__}: {exc}"
        ),
        BannerAction.OPEN_LOGS,
    )


class CallRunner:
    def __init__(self, presenter: ErrorPresenter) -> None:
        self._presenter = presenter
        self._tasks: set[asyncio.Task[Any]] = set()
        self._holds: dict[int, int] = {}
        self._controls: dict[int, tuple[Control, Callable[[], bool]]] = {}
        self._idle: asyncio.Event | None = None

    # ------------------------------------------------------------------ controls

    def guard(self, control: Control, enabled_when: Callable[[], bool] = lambda: True) -> None:
        """Let the runner decide ``control``'s enabled state: ``enabled_when()`` and no call on it."""
        self._controls[id(control)] = (control, enabled_when)
        self._apply(control)

    def refresh(self) -> None:
        """Re-evaluate every guarded control (the state its condition reads has changed)."""
        for control, _ in list(self._controls.values()):
            self._apply(control)

    def held(self, control: Control) -> bool:
        return self._holds.get(id(control), 0) > 0

    def _apply(self, control: Control) -> None:
        _, condition = self._controls.get(id(control), (control, lambda: True))
        control.setEnabled(not self.held(control) and condition())

    # ------------------------------------------------------------------ calls

    @property
    def running(self) -> int:
        return len(self._tasks)

    def run(
        self,
        what: str,
        work: Awaitable[T],
        *,
        affects: Iterable[Control] = (),
        on_done: Callable[[T], None] | None = None,
        on_failed: Callable[[BaseException], None] | None = None,
        context: object | None = None,
    ) -> asyncio.Task[T | None]:
        """Run ``work``; ``what`` completes "Could not …" if it fails (``"send the message"``).
        ``on_failed`` runs before the failure is presented (to put back what the user typed, say)."""
        controls = list(affects)
        for control in controls:
            self._holds[id(control)] = self._holds.get(id(control), 0) + 1
            control.setEnabled(False)

        async def call() -> T | None:
            try:
                result = await work
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if on_failed is not None:
                    on_failed(exc)
                self._presenter.present(describe_failure(what, exc), context)
                return None
            finally:
                for control in controls:
                    count = self._holds.get(id(control), 1) - 1
                    if count:
                        self._holds[id(control)] = count
                    else:
                        self._holds.pop(id(control), None)
                    self._apply(control)
            if on_done is not None:
                try:
                    on_done(result)
                except Exception as exc:
                    self._presenter.present(describe_failure(what, exc), context)
            return result

        task = asyncio.ensure_future(call())
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        if inspect.iscoroutine(work):
            # Cancelled before it started, ``work`` was never awaited: close it rather than leak it.
            task.add_done_callback(lambda _: work.close())
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not self._tasks and self._idle is not None:
            self._idle.set()

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Until no call runs (for shutting down, and for tests)."""
        async with asyncio.timeout(timeout):
            while self._tasks:
                self._idle = asyncio.Event()
                await self._idle.wait()

    async def cancel_all(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
