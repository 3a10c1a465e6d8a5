"""Session Service: session creation, resume, cancel, compatibility checks and workspace resolution
(seed 001 §1, §4.1, §4.4; seed 004 Session)."""
