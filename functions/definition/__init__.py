"""A job definition's models (docs/defining-a-job.md): job.json and its classes (job_spec.py), a packet's
case, the actions, what they all share, and a schema's reference cycles."""
