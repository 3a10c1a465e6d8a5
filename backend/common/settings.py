"""The service-wide knobs, with the defaults the design asks for. Per-tenant policy lives in config
files (:mod:`backend.policy.config`), not here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

__all__ = ["Limits", "Settings", "VersionRange"]

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class VersionRange:
    """PEP 440 specifiers for one client component: outside ``supported`` → ``incompatible``;
    inside it but matching ``deprecated`` → ``deprecated``."""

    supported: str = ">=0.1,<2"
    deprecated: str | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    max_artifact_bytes: int = 32 * MiB
    """Decoded artifact content (seed 001 §5 Workspace.Upload size limit)."""
    max_json_body_bytes: int = 1 * MiB
    """Every JSON body except artifact uploads (an audit batch of 500 envelopes fits)."""
    max_events_per_batch: int = 500
    max_event_bytes: int = 64 * 1024
    """One audit or telemetry envelope, serialised (well under DynamoDB's 400 KB item limit)."""
    upload_budget_bytes: int = 512 * MiB
    """Upload bodies being read at once, across all requests; past it uploads get 429 and retry."""

    @property
    def max_upload_body_bytes(self) -> int:
        """An artifact's JSON body: base64 grows content by 4/3, plus room for the other fields."""
        return (self.max_artifact_bytes + 2) // 3 * 4 + 64 * 1024


@dataclass(frozen=True, slots=True)
class Settings:
    limits: Limits = field(default_factory=Limits)
    bundle_ttl: timedelta = timedelta(hours=8)
    """How long a policy bundle (and so a session, seed 004) is valid; a tenant's config may override."""
    resume_grace: timedelta = timedelta(hours=1)
    """How long after its bundle expired a session can still be resumed with a refreshed bundle
    (seed 000 §8.6: policy expiry pauses a session, ResumeSession refreshes the bundle)."""
    workspace_inactivity: timedelta = timedelta(days=90)
    """Workspaces with no new session for this long are purged with everything in them (seed 004)."""
    orphan_grace: timedelta = timedelta(hours=1)
    """Artifact content with no metadata pointing at it is swept only when older than this, so an
    upload in flight (content written, metadata not yet) is never swept."""
    inline_content_bytes: int = 256 * 1024
    """Local store: artifact content up to this size is kept in the database, written with its
    metadata in one transaction; larger content goes to files (0: all of it). At about 256 KiB the
    two cost the same CPU per upload; below, the database costs less and spares a file's fsyncs."""
    client_clock_skew: timedelta = timedelta(minutes=5)
    """How far a client's timestamp may lie ahead of the server's clock where the server keeps order
    by it (a session history's ``snapshotAt``, an approval's ``decidedAt``); later ones get 400."""
    session_retention: timedelta = timedelta(days=90)
    """Sessions are kept this long after their bundle expired (past any resume), then purged: by
    ``cowork-backend purge`` on the local store, by DynamoDB's TTL on AWS."""
    telemetry_retention: timedelta = timedelta(days=30)
    telemetry_max_rows: int = 1_000_000
    """Local store bound on telemetry rows; the oldest go first."""
    otlp_endpoint: str | None = None
    """An OpenTelemetry collector's base URL (OTLP/HTTP, e.g. ``http://collector:4318``): telemetry is
    exported there as log records as well as stored. ``$COWORK_OTLP_ENDPOINT`` or backend.toml's
    ``[telemetry] otlpEndpoint``; None: stored only."""
    host_versions: VersionRange = field(default_factory=VersionRange)
    desktop_versions: VersionRange = field(default_factory=VersionRange)
    tool_timeout: timedelta = timedelta(seconds=120)
    """How long a Backend Tool Service call may run (seed 000 §7.4: remote tools, 120 s); past it the
    call answers a failed ToolResult, ``TOOL_EXECUTION_TIMEOUT``."""
    web_fetch_allow_loopback: bool = False
    """Development and tests only: let WebFetch reach 127.0.0.0/8 and ::1 (never other private
    addresses). backend.toml's ``[tools] webFetchAllowLoopback``; off unless set."""
