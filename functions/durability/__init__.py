"""Durable steps over Powertools idempotency (docs/semantics.md) and the named fault points the crash
drills fire at (their registry, and the points themselves)."""
