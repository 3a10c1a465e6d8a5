"""Telemetry Service: operational events, kept for a bounded time (seed 001 §1, §6.3)."""
