"""The local Lambda service: warm worker processes (execution environments) running the handlers."""
