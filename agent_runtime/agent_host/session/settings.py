"""What the runtime reads from its environment (the desktop sets it; docs/architecture/index.md,
"Processes and wires")."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_runtime.agent_host.state import runtime_data_dir
from contracts.errors import CoworkError, ErrorCode

__all__ = ["RuntimeSettings"]

APPROVAL_TIMEOUT_VARIABLE = "COWORK_APPROVAL_TIMEOUT_S"
LLM_RETRY_BASE_VARIABLE = "COWORK_LLM_RETRY_BASE_S"
MCP_ELICITATION_TIMEOUT_VARIABLE = "COWORK_MCP_ELICITATION_TIMEOUT_S"
MCP_START_WAIT_VARIABLE = "COWORK_MCP_START_WAIT_S"
MCP_BACKOFF_VARIABLE = "COWORK_MCP_BACKOFF_S"
EVENTS_FLUSH_VARIABLE = "COWORK_EVENTS_FLUSH_S"


def _seconds(environ: Mapping[str, str], name: str, default: float, *, low: float, high: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:
        raise CoworkError(
            ErrorCode.INVALID_REQUEST,
            f"{name} must be a number of seconds between {low:g} and {high:g}, not {raw!r}.",
            details={"variable": name},
        )
    return value


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    data_dir: Path
    approval_timeout_s: float = 300.0
    """Seed 000 §10.3: five minutes unless configured."""
    llm_retry_base_s: float = 1.0
    mcp_elicitation_timeout_s: float = 100.0
    """An MCP server's question unanswered this long is cancelled (under §7.4's 120 s per call)."""
    mcp_start_wait_s: float = 15.0
    """How long a task's first step waits for MCP servers still connecting."""
    mcp_backoff_s: float = 30.0
    """How long an MCP server that failed repeatedly rests before it is tried again."""
    events_flush_s: float = 1.0
    """How long an audit or telemetry envelope waits for others to share its request."""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> RuntimeSettings:
        return cls(
            data_dir=runtime_data_dir(environ),
            approval_timeout_s=_seconds(environ, APPROVAL_TIMEOUT_VARIABLE, 300.0, low=0.01, high=86_400),
            llm_retry_base_s=_seconds(environ, LLM_RETRY_BASE_VARIABLE, 1.0, low=0.0, high=60.0),
            mcp_elicitation_timeout_s=_seconds(
                environ, MCP_ELICITATION_TIMEOUT_VARIABLE, 100.0, low=0.01, high=86_400
            ),
            mcp_start_wait_s=_seconds(environ, MCP_START_WAIT_VARIABLE, 15.0, low=0.0, high=600),
            mcp_backoff_s=_seconds(environ, MCP_BACKOFF_VARIABLE, 30.0, low=0.0, high=3600),
            events_flush_s=_seconds(environ, EVENTS_FLUSH_VARIABLE, 1.0, low=0.01, high=60),
        )
