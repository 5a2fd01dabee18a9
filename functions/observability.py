"""The one place that creates the Powertools Logger, Tracer and Metrics (service ``docagent``)."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

SERVICE_NAME = "docagent"
METRICS_NAMESPACE = "DocAgent"

logger = Logger(service=SERVICE_NAME)
tracer = Tracer(service=SERVICE_NAME)
metrics = Metrics(namespace=METRICS_NAMESPACE, service=SERVICE_NAME)

__all__ = ["METRICS_NAMESPACE", "SERVICE_NAME", "MetricUnit", "logger", "metrics", "tracer"]
