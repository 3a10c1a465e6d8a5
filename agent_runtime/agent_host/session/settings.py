"""What the runtime reads from its environment (the desktop sets it; DESIGN.md "Processes and wires")."""

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

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> RuntimeSettings:
        return cls(
            data_dir=runtime_data_dir(environ),
            approval_timeout_s=_seconds(environ, APPROVAL_TIMEOUT_VARIABLE, 300.0, low=0.01, high=86_400),
            llm_retry_base_s=_seconds(environ, LLM_RETRY_BASE_VARIABLE, 1.0, low=0.0, high=60.0),
        )
