"""The local cloud (docs/local-cloud.md). moto's Batch and EC2 backends, which its Step Functions interpreter
and SSM backend would import with them, load when used instead (deferred_backends.py): the finder that defers
them is in place before any module of the local cloud imports moto's, and imports nothing of moto itself, so
the CLI's light imports of the local cloud (``request_counts``, ``lifecycle``) start without moto."""

from docagent.localcloud.deferred_backends import defer_unused_backends

defer_unused_backends()
