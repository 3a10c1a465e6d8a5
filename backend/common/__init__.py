"""What every service shares: errors, auth, clock, IDs, settings and the HTTP plumbing."""
