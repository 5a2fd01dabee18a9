"""docagent Lambda code: one asset, five handlers (see docs/design.md)."""
