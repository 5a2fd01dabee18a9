"""The local Step Functions: executions, Distributed Map, redrive, history, TestState, validation."""
