"""REST payloads of the backend services (seed 001 §4, §6.3; seed 004), one module per service.

``sessions`` (Session Service), ``policies`` (Policy Service: published keys, bundle issuing),
``workspaces`` (Workspace Service: workspaces and artifacts), ``approvals`` (Approval Service) and
``observability`` (Audit and Telemetry Services). Every error body is :class:`contracts.errors.ErrorShape`.

Requests name no tenant or user: the caller's bearer token decides both, so a body cannot speak for
another tenant. Field limits (lengths, counts) bound what a client can make the backend store.
"""
