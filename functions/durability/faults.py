"""Named fault points for crash drills. A no-op unless FAULT_INJECTION_ENABLED=true and the job's options
name the point, as in
``{"fault": {"point": "after_model_call", "document_index": 138, "mode": "exit", "times": 1}}``.

Modes: ``exit`` kills the process (os._exit(137), like an out-of-memory kill), ``raise`` raises InjectedFault,
``hang`` sleeps past the invocation's deadline (a timeout). ``times: n`` fires at the first n arrivals at
the point (per document, action or part), counted durably: a marker written once (IfNoneMatch) before the
fault fires, so an attempt that timed out before it reached the point uses none, and a later attempt still
fires; ``until_retry: n`` fires only while the Step Functions retry count is below n; ``until_redrive: n``
fires only while the execution's redrive count is below n, so only a redrive recovers it; null fires on
every attempt.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

from functions import s3_json, storage
from functions.durability.fault_points import fault_point_named
from functions.errors import InjectedFault
from functions.observability import logger
from functions.payloads.job import JobOptions, StoredRequest
from functions.settings import get_settings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from functions.payloads.common import FaultPointName

EXIT_CODE = 137
_HANG_WITHOUT_CONTEXT_SECONDS = 900.0


def fault_point(
    name: FaultPointName,
    options: JobOptions,
    retry_count: int,
    *,
    job_id: str,
    redrive_count: int = 0,
    document_index: int | None = None,
    action: str | None = None,
    part: int | None = None,
    context: LambdaContext | None = None,
) -> None:
    """Inject the configured fault if it targets this point (and document, and retry); else do nothing.

    ``document_index`` is given at per-document points and ``action`` at per-action points (the registry's
    scope, functions/durability/fault_points.py); other points ignore the spec's document_index and action.
    ``part`` is the partition (or batch part) of a Map child that passes a job-level point: ``times`` counts
    each part's firings apart, as it counts each document's and each action's.
    """
    spec = options.fault
    if spec is None or spec.point != name or not get_settings().fault_injection_enabled:
        return
    point = fault_point_named(name)
    if (
        point.scope == "document"
        and spec.document_index is not None
        and spec.document_index != document_index
    ):
        return
    if point.scope == "action" and spec.action is not None and spec.action != action:
        return
    if spec.until_retry is not None and retry_count >= spec.until_retry:
        return
    if spec.until_redrive is not None and redrive_count >= spec.until_redrive:
        return
    place = _place(point.scope, document_index, action, part)
    if spec.times is not None and not _take_firing(job_id, name, place, spec.times):
        return
    logger.warning(
        "injecting fault",
        extra={
            "fault_point": name,
            "fault_step": point.step,
            "fault_mode": spec.mode,
            "retry_count": retry_count,
            "redrive_count": redrive_count,
            "document_index": document_index,
            "action": action,
        },
    )
    if spec.mode == "exit":
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_CODE)
    if spec.mode == "raise":
        raise InjectedFault(f"fault injected at {name} (retry {retry_count})")
    remaining = context.get_remaining_time_in_millis() / 1000 if context is not None else None
    time.sleep(_HANG_WITHOUT_CONTEXT_SECONDS if remaining is None else max(remaining, 0.0) + 2.0)


def _place(scope: str, document_index: int | None, action: str | None, part: int | None) -> str:
    """Where ``times`` counts a point's firings: its document, its action, its part, else the job."""
    if scope == "document" and document_index is not None:
        return f"document-{document_index}"
    if scope == "action" and action is not None:
        return f"action-{action}"
    return f"part-{part}" if part is not None else "job"


def _take_firing(job_id: str, point: str, place: str, times: int) -> bool:
    """Write the first free marker of the ``times`` allowed (once each, IfNoneMatch): True when one was free,
    so the fault fires and a later arrival (another attempt, a second delivery) finds it taken."""
    return any(
        s3_json.put_json_once(
            storage.fault_fired_key(job_id, point, place, firing),
            {"job_id": job_id, "point": point, "place": place, "firing": firing},
        )
        for firing in range(times)
    )


def job_options(job_id: str, options: JobOptions) -> JobOptions:
    """The options a job-level fault point honours: the event's, else (fault drills only) the job's own from
    request.json, for events a state machine built without ``options``."""
    if options.fault is not None or not get_settings().fault_injection_enabled:
        return options
    stored = s3_json.get_json_or_none(storage.request_key(job_id))
    if stored is None:
        return options
    return StoredRequest.model_validate(stored).request.options
