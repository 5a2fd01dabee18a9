"""Bedrock batch inference for a job (docs/batch.md): one input record per document, one batch job per
docagent job, its output records journalled as finished model calls by the documents' own durable steps."""
