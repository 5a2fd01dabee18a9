"""The one place that creates the Powertools Logger, Tracer and Metrics (service ``docagent``).

Tracing off (``POWERTOOLS_TRACE_DISABLED``, or outside Lambda: the unit tests, the CLI, the local cloud's
workers) gives the Tracer a provider that does nothing. Powertools' Tracer otherwise imports the X-Ray SDK
even when it is disabled, to make its recorder the provider (aws_lambda_powertools 3.x ``tracing/tracer.py``,
``__build_config``: ``provider or ... or self._patch_xray_provider()``, read 2026-12-02), and importing
``aws_xray_sdk.core`` builds that recorder, and outside Lambda two X-Ray clients: about half a second of
every cold start that traces nothing (docs/performance.md). On Lambda with tracing on, the provider is
X-Ray's, as before.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.tracing.base import BaseProvider, BaseSegment

SERVICE_NAME = "docagent"
METRICS_NAMESPACE = "DocAgent"

_TRUE = {"1", "true", "on", "yes", "y"}


def tracing_on() -> bool:
    """Whether Powertools' Tracer would trace here: on Lambda (``LAMBDA_TASK_ROOT``), not under SAM local, and
    not switched off with ``POWERTOOLS_TRACE_DISABLED`` (Tracer ``_is_tracer_disabled``, the same rules)."""
    if os.environ.get("POWERTOOLS_TRACE_DISABLED", "false").strip().lower() in _TRUE:
        return False
    return bool(os.environ.get("LAMBDA_TASK_ROOT")) and not os.environ.get("AWS_SAM_LOCAL")


class _NoSegment(BaseSegment):
    def close(self, end_time: int | None = None) -> None:
        return None

    def add_subsegment(self, subsegment: Any) -> None:
        return None

    def remove_subsegment(self, subsegment: Any) -> None:
        return None

    def put_annotation(self, key: str, value: Any) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        return None

    def add_exception(self, exception: BaseException, stack: Any, remote: bool = False) -> None:
        return None


class NoTracing(BaseProvider):
    """The Tracer's provider when tracing is off: every segment is a no-op, no SDK is imported."""

    @contextmanager
    def in_subsegment(self, name: str | None = None, **kwargs: Any) -> Iterator[BaseSegment]:
        yield _NoSegment()

    @asynccontextmanager
    async def in_subsegment_async(self, name: str | None = None, **kwargs: Any) -> AsyncIterator[BaseSegment]:
        yield _NoSegment()

    def put_annotation(self, key: str, value: Any) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        return None

    def patch(self, modules: Sequence[str]) -> None:
        return None

    def patch_all(self) -> None:
        return None


logger = Logger(service=SERVICE_NAME)
tracer = Tracer(service=SERVICE_NAME, provider=None if tracing_on() else NoTracing())
metrics = Metrics(namespace=METRICS_NAMESPACE, service=SERVICE_NAME)

__all__ = ["METRICS_NAMESPACE", "SERVICE_NAME", "MetricUnit", "logger", "metrics", "tracer", "tracing_on"]
