"""The per-document work every worker-process strategy does, identical to the product's: the same
synthetic documents (seed 7), the same local model (the invoice example's reader,
examples/invoices/local_reader.py, as the local cloud runs it), the same customer lookup, the same ticket at
the end.

Instrumentation, not checkpoints (a strategy never reads them back): every model call is appended to
``calls.log`` and every finished document to ``done.log`` (one ``write`` with O_APPEND each, so a SIGKILL
never loses a line), and the ticket system is an append-only ledger (``tickets.log``) that, like a naive
ticket API, opens a new ticket on every request. A worker talks to the parent over stdout: ``start``,
``call <index>``, ``end``, and ``stopped <index>`` when it reaches the kill point, where it stops itself
(SIGSTOP) so the parent's SIGKILL lands at exactly that point with every thread frozen as it was. Every line
ends with `` @<seconds>``, the worker's ``time.monotonic()`` when it happened (one clock for every process of
the machine), so the parent measures when things happened, not when it got round to reading the pipe: on a
busy machine it can read ``start`` and ``end`` in one go, microseconds apart.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from docagent.drills.synthetic import (
    CustomerRecord,
    SyntheticDocument,
    generate_customers,
    generate_documents,
)
from docagent.localcloud.bedrock.labels import Reader, load_reader

SEED = 7
INVOICE_READER = Path(__file__).resolve().parents[3] / "examples" / "invoices" / "local_reader.py"
CALLS_LOG = "calls.log"
DONE_LOG = "done.log"
TICKETS_LOG = "tickets.log"
REPORT_FILE = "report.json"
TICKET_POINT = -1  # ``--kill-at`` equal to the job's size: after the ticket call returned


def _append(path: Path, line: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, (line + "\n").encode())
    finally:
        os.close(descriptor)


STAMP = " @"


def say(message: str) -> None:
    """One line to the parent (stdout is a pipe it reads), stamped with when it happened."""
    os.write(sys.stdout.fileno(), f"{message}{STAMP}{time.monotonic():.6f}\n".encode())


def heard(line: str) -> tuple[str, float]:
    """A line ``say`` wrote: its message and its stamp."""
    message, _, stamp = line.rpartition(STAMP)
    return message, float(stamp)


@dataclass
class Workload:
    """One job's documents and instruments in ``run_dir``; ``kill_at`` is the model-call count (or the job's
    size for the ticket) at which the worker stops itself for the parent's SIGKILL."""

    run_dir: Path
    documents: int
    kill_at: int | None = None
    latency_ms: int = 0

    def __post_init__(self) -> None:
        self._calls = 0
        self._lock = threading.Lock()

    @cached_property
    def corpus(self) -> list[SyntheticDocument]:
        ids = [customer.customer_id for customer in self.customers.values()]
        return generate_documents(self.documents, seed=SEED, customer_ids=ids)

    @cached_property
    def customers(self) -> dict[str, CustomerRecord]:
        return {customer.customer_id: customer for customer in generate_customers(seed=SEED)}

    @cached_property
    def reader(self) -> Reader:
        return load_reader(INVOICE_READER)

    def prepare(self) -> None:
        """What a worker does before its first document (so ``start`` marks the job, not the imports)."""
        _ = self.corpus, self.reader

    def review(self, index: int) -> dict[str, Any]:
        """The document's result: one model call (journalled), the customer lookup, the result record."""
        document = self.corpus[index]
        if self.latency_ms:  # a hosted model's latency (the local reader answers in about a millisecond)
            time.sleep(self.latency_ms / 1000)
        read: dict[str, Any] = json.loads(self.reader.reply(document.text))
        # A reply missing a field fails the extraction, as the schema's required fields make it fail.
        facts = read if all(value is not None for value in read.values()) else None
        error = None if facts is not None else "ExtractionFailed"
        with self._lock:
            self._calls += 1
            calls = self._calls
        _append(self.run_dir / CALLS_LOG, document.document_id)
        say(f"call {index}")
        if self.kill_at is not None and calls == self.kill_at + 1:
            self.stop_here(index)
        customer = self.customers.get(str(facts["customer_id"])) if facts is not None else None
        return {
            "document_id": document.document_id,
            "index": index,
            "status": "extracted" if customer is not None else "rejected",
            "facts": facts,
            "customer": customer.model_dump(mode="json") if customer is not None else None,
            "error": error or (None if customer is not None else "UnknownCustomer"),
        }

    def finished(self, result: dict[str, Any]) -> None:
        _append(self.run_dir / DONE_LOG, str(result["document_id"]))

    def stop_here(self, point: int) -> None:
        """Report the kill point and freeze the whole process; the parent SIGKILLs it."""
        say(f"stopped {point}")
        os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(60)  # never reached: the parent kills a stopped worker

    def open_ticket(self, job_id: str, results: list[dict[str, Any]]) -> dict[str, Any]:
        """A naive ticket request: every call opens a ticket (no idempotency key)."""
        ticket = {"reference": job_id, "documents": len(results), "opened_at": time.time()}
        _append(self.run_dir / TICKETS_LOG, json.dumps(ticket))
        if self.kill_at == self.documents:
            self.stop_here(TICKET_POINT)
        return ticket

    def write_report(self, results: list[dict[str, Any]]) -> None:
        """The job's output (not a checkpoint): every result, by document order."""
        ordered = sorted(results, key=lambda result: int(result["index"]))
        (self.run_dir / REPORT_FILE).write_text(json.dumps({"results": ordered}))
