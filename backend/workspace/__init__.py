"""Workspace Service: workspaces, artifacts and the per-session ``session_history`` (seed 004 Workspace,
session_history; seed 000 §7.5)."""
