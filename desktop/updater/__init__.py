"""The desktop's embedded updater for the agent runtime (seed 001 §9 Phase 4, §11 "Agent-runtime
download model"; issue 8).

Qt-free logic, one module per step:

- ``manifest`` — fetch the signed release manifest, trust it (pinned roots in ``keys``, expiry,
  rollback), choose the release for this platform, channel, rollout bucket and desktop;
- ``download`` — stream the bundle to a ``.part`` file: resumable, bounded, hashed as it arrives;
- ``extract`` — unpack into a private staging directory, refusing anything unsafe, checked against
  the bundle's inner file list;
- ``install`` — side-by-side versions, the atomically switched pointer, rollback, clean-up;
- ``health`` — a new runtime must start and answer on JSON-RPC in time, or it is marked bad;
- ``crashloop`` — the process manager reports starts and exits (``CrashLoopWatch``); a
  crash-looping new version is rolled back;
- ``active`` — which runtime a new session starts (also the runtime bundled with the app, and
  where the installer's ``update.json`` lives);
- ``config`` — whether and where the app checks: ``update.json``, ``COWORK_UPDATE_MANIFEST_URL``,
  ``COWORK_UPDATE_CHANNEL``;
- ``service`` — ``UpdateService``: one whole round, with progress and one result (``outcome``);
- ``indicator`` — that progress and result as the window's one-line note;
- ``qt`` — the thin Qt adapter for the window: schedule, progress and result signals.

Nothing is imported here: ``active`` sits on the path of every runtime start and must stay cheap.
"""
