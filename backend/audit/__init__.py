"""Audit Service: an append-only, hash-chained record of security-relevant events (seed 001 §1, §6.3)."""
