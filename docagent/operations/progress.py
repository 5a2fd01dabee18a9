"""What ``status`` shows and how every command that follows a job shows it: a snapshot of the execution and
the documents' progress (from the Map Run's counts), and a live progress bar until the job ends."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from docagent.operations.context import EXIT_INTERRUPTED, EXIT_JOB_FAILED, EXIT_OK, RefusedError
from docagent.operations.display import as_datetime, error_message, iso, now
from docagent.operations.map_run_children import FAILED_STATUSES
from docagent.operations.records import JobRecords

__all__ = ["FAILED_STATUSES", "Snapshot", "exit_code_for", "follow", "progress_detail", "snapshot"]

console = Console(stderr=True, markup=False)  # user text prints as written (formats.wide_console)


@dataclass
class Snapshot:
    """What `status` shows: the execution, its current state and the documents' progress."""

    job_id: str
    execution_arn: str
    status: str
    current_state: str | None
    error: str | None
    cause: str | None
    started_at: Any
    stopped_at: Any
    redrive_count: int
    redrive_date: Any
    documents: dict[
        str, int
    ]  # total, succeeded (of which rejected, review), failed, running, pending, results_stored
    map_run: dict[str, Any] | None
    approval: str | None
    # The job's wait for its review queue (records.py ``review_wait``), None when it never waited.
    review_wait: dict[str, Any] | None = None

    @property
    def waiting_for_review(self) -> bool:
        return self.status == "RUNNING" and self.current_state == "WaitForReview"

    def review_wait_line(self) -> str | None:
        wait = self.review_wait
        if wait is None:
            return None
        counted = f"{wait['decided']} of {wait['documents']} decided"
        if self.waiting_for_review and wait["status"] == "waiting":
            return f"waiting for review: {counted} (`docagent review list {self.job_id}`)"
        return f"{wait['status']}: {counted}" + (f", by {wait['released_by']}" if wait["released_by"] else "")

    def elapsed_seconds(self) -> float | None:
        started = as_datetime(self.started_at)
        if started is None:
            return None
        stopped = as_datetime(self.stopped_at) or now()
        return round((stopped - started).total_seconds(), 1)

    def as_json(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "execution_arn": self.execution_arn,
            "status": self.status,
            "current_state": self.current_state,
            "error": self.error,
            "cause": self.cause,
            "started_at": iso(self.started_at),
            "stopped_at": iso(self.stopped_at),
            "elapsed_seconds": self.elapsed_seconds(),
            "redrive_count": self.redrive_count,
            "redrive_date": iso(self.redrive_date),
            "documents": self.documents,
            "map_run": self.map_run,
            "approval": self.approval,
            "review_wait": self.review_wait,
            "waiting_for_review": self.waiting_for_review,
        }


def snapshot(records: JobRecords, *, count_rejected: bool = True) -> Snapshot:
    """The job now. ``count_rejected`` reads every stored result to tell rejected and review documents (a
    child that succeeded with a rejection, or a document sent to a person) from extracted ones; a live
    progress bar counts them only at the end."""
    records.refresh()
    described = records.require_execution()
    counts = records.document_counts()
    map_run = None
    if records.map_run is not None:
        map_run = {
            "map_run_arn": records.map_run.get("mapRunArn"),
            "status": records.map_run.get("status"),
            "redrive_count": int(records.map_run.get("redriveCount") or 0),
        }
    approval = records.approval.status if records.approval else None
    statuses = [result.status for result in records.results.values()] if count_rejected else []
    return Snapshot(
        job_id=records.job_id,
        execution_arn=records.execution_arn,
        status=str(described["status"]),
        current_state=records.current_state(),
        error=described.get("error"),
        cause=error_message(described.get("cause")),
        started_at=described.get("startDate"),
        stopped_at=described.get("stopDate"),
        redrive_count=int(described.get("redriveCount") or 0),
        redrive_date=described.get("redriveDate"),
        documents={
            "total": counts["total"],
            "succeeded": counts["succeeded"],
            "rejected": statuses.count("rejected"),
            "review": statuses.count("review"),
            "failed": counts["failed"],
            "running": counts["running"],
            "pending": counts["pending"],
            "results_stored": counts["results_stored"],
        },
        map_run=map_run,
        approval=approval,
        review_wait=records.review_wait(),
    )


def exit_code_for(status: str) -> int:
    return EXIT_JOB_FAILED if status in FAILED_STATUSES else EXIT_OK


class DetailColumn(ProgressColumn):
    """A task's ``detail`` field, a Text with its own styles (a TextColumn would format it as markup)."""

    def render(self, task: Task) -> Text:
        detail = task.fields.get("detail")
        return detail if isinstance(detail, Text) else Text(str(detail or ""))


def progress_bar(show: bool) -> Progress:
    """The documents bar every command that follows a job shows on stderr (hidden when not ``show``)."""
    return Progress(
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        DetailColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not show,
        transient=False,
    )


def follow(
    records: JobRecords, *, show: bool, interval: float = 0.5, description: str | None = None
) -> Snapshot:
    """Poll until the execution is no longer RUNNING, with a live progress bar on stderr when ``show``.
    Ctrl-C stops following, not the job: a refusal (exit 130) that says how to follow it again."""
    try:
        with progress_bar(show) as progress:
            task = progress.add_task(description or records.job_id, total=None, detail="")
            hinted = False
            while True:
                current = snapshot(records, count_rejected=False)
                if current.status != "RUNNING":
                    current = snapshot(records)
                progress.update(
                    task,
                    total=current.documents["total"] or None,
                    completed=current.documents["succeeded"],
                    detail=progress_detail(current),
                )
                if current.status != "RUNNING":
                    return current
                if show and not hinted and current.current_state == "RequestApproval":
                    console.print(f"waiting for approval: `docagent approve {records.job_id}` or `reject`")
                    hinted = True
                if show and not hinted and current.waiting_for_review:
                    console.print(f"waiting for review: `docagent review list {records.job_id}`")
                    hinted = True
                time.sleep(interval)
    except KeyboardInterrupt:
        again = f"docagent status {records.job_id} --watch"
        raise RefusedError(
            "StoppedFollowing",
            f"stopped following job {records.job_id}; the job itself keeps running. Follow it again: {again}",
            EXIT_INTERRUPTED,
            {"job_id": records.job_id, "follow_again": again},
        ) from None


def status_label(status: str) -> str:
    """The status as the operator reads it: ABORTED is what StopExecution leaves."""
    return "ABORTED (stopped)" if status == "ABORTED" else status


def progress_detail(current: Snapshot) -> Text:
    documents = current.documents
    rejected, review = documents["rejected"], documents.get("review", 0)
    parts = [Text(f"{documents['succeeded'] - rejected - review} ok", "green")]
    if review:
        parts.append(Text(f"{review} in review", "cyan"))
    if rejected:
        parts.append(Text(f"{rejected} rejected", "yellow"))
    if documents["failed"]:
        parts.append(Text(f"{documents['failed']} failed", "red"))
    parts.append(Text(f"{documents['running']} running · {documents['pending']} pending"))
    state = current.current_state or "-"
    parts.append(
        Text(f"{current.status} in {state}" if current.status == "RUNNING" else status_label(current.status))
    )
    if current.redrive_count:
        parts.append(Text(f"redrives {current.redrive_count}"))
    return Text(" · ").join(parts)
