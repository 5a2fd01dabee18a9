"""The long-running worker of the hand-written strategies: one process looping over the documents.

``python -m docagent.drills.experiment.worker STRATEGY RUN_DIR --documents N [--kill-at K]``

- ``none``: progress lives in memory only; a restart starts again.
- ``exit``: every result is written to the checkpoint store (SQLite) in one transaction when the loop
  ends, also when it ends with an exception (``finally``); a SIGKILL leaves nothing, so a restart starts
  again.
- ``async``: a write-behind queue: a background thread commits each result while the next document runs; a
  restart skips what the store holds, and a kill loses the results still in the queue.

The ticket is opened after the report, with no idempotency key (as a naive worker does).
"""

from __future__ import annotations

import argparse
import json
import queue
import sqlite3
import threading
from pathlib import Path
from typing import Any

from docagent.drills.experiment.workload import Workload, say

CHECKPOINT_FILE = "checkpoints.sqlite"
STRATEGIES = ("none", "exit", "async")


class ResultStore:
    """The checkpoint store: one row per finished document."""

    def __init__(self, path: Path) -> None:
        self.connection = sqlite3.connect(path, check_same_thread=False)
        # The same SQLite settings as LangGraph's SqliteSaver (WAL journal, default synchronous=FULL).
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute(
            "CREATE TABLE IF NOT EXISTS results (document_id TEXT PRIMARY KEY, result TEXT)"
        )
        self.connection.commit()

    def load(self) -> dict[str, dict[str, Any]]:
        rows = self.connection.execute("SELECT document_id, result FROM results").fetchall()
        return {document_id: json.loads(result) for document_id, result in rows}

    def put(self, results: list[dict[str, Any]]) -> None:
        with self.connection:  # one transaction, committed (fsync) on exit
            self.connection.executemany(
                "INSERT OR REPLACE INTO results VALUES (?, ?)",
                [(result["document_id"], json.dumps(result)) for result in results],
            )


class WriteBehind:
    """Commits results in a background thread, one transaction each, while the worker moves on."""

    def __init__(self, store: ResultStore) -> None:
        self.store = store
        self.queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while (result := self.queue.get()) is not None:
            self.store.put([result])

    def flush(self) -> None:
        self.queue.put(None)
        self.thread.join()


def run(strategy: str, workload: Workload, job_id: str) -> None:
    store = None if strategy == "none" else ResultStore(workload.run_dir / CHECKPOINT_FILE)
    results = store.load() if store is not None else {}
    writer = WriteBehind(store) if store is not None and strategy == "async" else None
    workload.prepare()
    say("start")
    fresh: list[dict[str, Any]] = []
    try:
        for index, document in enumerate(workload.corpus):
            if document.document_id in results:
                continue
            result = workload.review(index)
            results[document.document_id] = result
            workload.finished(result)
            if writer is not None:
                writer.queue.put(result)
            else:
                fresh.append(result)
    finally:
        if writer is not None:
            writer.flush()
        elif store is not None:
            store.put(fresh)
    workload.write_report(list(results.values()))
    workload.open_ticket(job_id, list(results.values()))
    say("end")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("strategy", choices=STRATEGIES)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--documents", type=int, required=True)
    parser.add_argument("--kill-at", type=int)
    parser.add_argument("--latency-ms", type=int, default=0, help="added to every model call")
    parser.add_argument("--job-id", default="experiment")
    args = parser.parse_args(argv)
    run(args.strategy, Workload(args.run_dir, args.documents, args.kill_at, args.latency_ms), args.job_id)


if __name__ == "__main__":
    main()
