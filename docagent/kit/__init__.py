"""The kit: job definitions as folders (build, validate, publish, scaffold)."""
