"""Policy Service: signed policy bundles from per-tenant configuration (seed 001 §1, §4.1, §5)."""
