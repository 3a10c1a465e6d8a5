"""Approval Service: persisted approval decisions for audit and compliance (seed 001 §1, §4.3; 000 §10.4)."""
