"""The ``ToolRouter`` protocol: the sole boundary between the agent host and the tools (seed 000 §7.1).

Contract for implementations:

* ``execute`` never raises for anything a tool call can get wrong — unknown tools, bad arguments,
  missing files, timeouts, OS errors: each is a ``ToolResult`` with ``status="failed"`` and the seed's
  error code (seed 003 §3, §7.3).
* ``execute`` may be cancelled (the host enforces per-category timeouts, seed 000 §7.4, and cooperative
  cancellation waits for tools but a shutdown may not): a cancelled call leaves nothing running
  behind it — a command's whole process tree is killed, an HTTP request is aborted — before the
  ``CancelledError`` propagates.
* ``execute`` asks ``check_redirect`` (when given) before HttpRequest follows each redirect, with the
  hop's absolute URL and method, and follows only on ``None``; a reason ends the call as a failed
  result and nothing is sent to that URL. The host passes its policy and approval check of the hop
  (seed 000 §8.2): the first URL and every hop pass the same rules.
* ``execute`` is handed ``read_scope`` (only for ListDirectory, Glob and Grep) and shows or reads no
  file below the path the policy checked that ``read_scope.allows`` refuses: every file a search
  touches passes the policy's File.Read paths, as a ReadFile of it would.
* Artifacts whose content lives in a file (``ToolArtifact.dataPath``) stay on disk until the host has
  uploaded them and calls ``release_artifacts``; ``aclose`` removes whatever is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from contracts.tools import ReadScope, ToolArtifact, ToolDefinition, ToolRequest, ToolResult
from contracts.urls import RedirectCheck

__all__ = ["RedirectCheck", "ToolRouter"]


@runtime_checkable
class ToolRouter(Protocol):
    async def execute(
        self,
        request: ToolRequest,
        *,
        check_redirect: RedirectCheck | None = None,
        read_scope: ReadScope | None = None,
    ) -> ToolResult:
        """Run one tool call and describe how it ended."""
        ...

    def get_available_tools(self) -> list[ToolDefinition]:
        """Every tool this router can run, as described to the LLM (seed 003 §5)."""
        ...

    def release_artifacts(self, artifacts: Sequence[ToolArtifact]) -> None:
        """Delete the spooled files behind these artifacts once the host no longer needs them."""
        ...

    async def aclose(self) -> None:
        """Stop anything still running and remove every spooled artifact file."""
        ...
