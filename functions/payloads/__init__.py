"""The pipeline's contract by step: pydantic models of every payload and stored object in docs/design.md."""
