"""The Backend Tool Service (seed 001 §1, Phase 3): remote tools the runtime invokes through
``BackendTool.Invoke`` (seed 000 §7.6) — ``WorkspaceSearch`` (this workspace's past conversations and
artifacts) and ``WebFetch`` (a web page through the organisation's egress, as Markdown). Stateless: it
owns no data; sessions, policy and search are the other services' (:mod:`backend.tools.ports`)."""
