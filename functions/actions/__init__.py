"""Job-level actions (docs/actions.md): what a job does once its report is written, each exactly once."""
