"""The session's audit and telemetry producer, built and wired once the session's bundle is verified
(seed 001 §6.3, Phase 3; :mod:`agent_runtime.agent_host.observability`).

The producer taps the session's event emitter, the loop hands it its policy decisions
(``LoopContext.observability``), and it records the bundle it starts with (``policy_loaded``) and, the
first time in a process, how long the runtime took to start (``runtime_started``). Envelopes name the
tenant and user the bundle was issued to (signed by the Policy Service, so they are the token's own),
and are spooled for the backend they are meant for: a loopback backend is named without its port,
since the embedded backend gets a new port each time it starts but keeps its store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

import httpx

from agent_runtime.agent_host.loop import LoopContext
from agent_runtime.agent_host.observability import EventSpool, SessionObservability
from agent_runtime.agent_host.services import BackendClient
from agent_runtime.agent_host.services.client import USER_AGENT
from agent_runtime.agent_host.state import events_dir

__all__ = ["spool_origin", "start_observing"]


def spool_origin(url: str, *, loopback: bool) -> str:
    """The backend a spooled envelope is meant for."""
    if not loopback:
        return url.rstrip("/")
    parsed = httpx.URL(url)
    return str(parsed.copy_with(port=None)).rstrip("/")


def start_observing(
    ctx: LoopContext,
    *,
    backend: BackendClient,
    data_dir: Path,
    feature_flags: Mapping[str, bool],
    source: str,
    clock: Callable[[], datetime],
    startup_ms: float | None = None,
    flush_after_s: float = 1.0,
) -> SessionObservability:
    """The session's producer, attached to ``ctx`` and sending; ``source`` says how its bundle came
    (``created``, ``recovered``)."""
    bundle = ctx.enforcer.bundle
    producer = SessionObservability(
        spool=EventSpool(events_dir(data_dir)),
        client=backend,
        origin=spool_origin(backend.config.url, loopback=backend.config.loopback),
        tenant_id=bundle.tenant_id or ctx.tenant_id,
        user_id=bundle.user_id or ctx.user_id,
        workspace_id=ctx.workspace_id,
        session_id=ctx.session_id,
        feature_flags=feature_flags,
        clock=clock,
        outbox_options={"flush_after_s": flush_after_s},
    )
    ctx.observability = producer
    ctx.emitter.observer = producer.observe
    producer.start()
    producer.policy_loaded(bundle, source, feature_flags)
    if startup_ms is not None:
        # "cowork-agent-runtime/<version>": the version the runtime tells every service it is.
        version = USER_AGENT.rpartition("/")[2] or "unknown"
        producer.runtime_started(startup_ms, runtime_version=version, os_family=ctx.os_family.value)
    return producer
