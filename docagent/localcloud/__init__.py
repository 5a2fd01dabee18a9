"""The local cloud (docs/local-cloud.md). moto's Batch and EC2 backends, which its Step Functions interpreter
and SSM backend would import with them, load when used instead (deferred_backends.py): first, before any
module of the local cloud imports moto's."""

from docagent.localcloud.deferred_backends import defer_unused_backends

defer_unused_backends()
