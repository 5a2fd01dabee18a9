"""``docagent chaos``: the crash matrix, run on one local cloud.

Every fault point (the registry, functions/durability/fault_points.py) x every mode (``exit``: the worker
process dies, ``raise``: the handler raises ``InjectedFault``, ``hang``: the worker sleeps past its deadline
and is killed as ``Sandbox.Timedout``) x every recovery (``retry``: only the first attempt dies and the
state's Retry must recover it; ``redrive``: every attempt dies until the execution is redriven, so the job
fails first and ``RedriveExecution`` must recover it). Each cell is a small job over the same documents as a
crash-free baseline job, and is checked against the baseline:

- ``one_result_per_document`` / ``results_match_baseline``: every document has exactly one result, equal to
  the baseline's byte for byte once the fields that legitimately differ between two jobs are removed
  (``IGNORED_RESULT_FIELDS``: the job id, the processing time, the model call's id, the job's creation time,
  the OCR record's key, which names the job);
- ``no_completed_call_repeated``: at most one journalled model call per document. The journal records a call
  only once it finished, so a call cut off in flight (the only repeat allowed) never shows there: any repeat
  in the journal is a finished call made twice. The count is reported per cell;
- ``actions_done_once``: every action of the job is done (its done.json), the execution's output says the
  same, and the local http service (the ticket service) holds exactly one record per http action done, the
  one its done.json names;
- ``report_covers_every_document`` / ``verified``: report.json has a row per document, none failed, and equals
  the baseline's report (without ``IGNORED_REPORT_FIELDS``: the job id, the Map Run, the creation time and
  each row's model call id); the execution's output says
  ``verification.verified``;
- ``nothing_in_progress``: none of the job's idempotency records (prepare, each document's durable
  steps: classify, extract, lookup-{check}; actions) is left INPROGRESS;
- ``expected_path``: the fault really fired, and the job was recovered the way the cell says (a retry cell
  succeeds without a redrive; a redrive cell fails first and succeeds after exactly one redrive).

A cell that cannot apply is ``n/a`` with its reason, never skipped: a ``retry`` cell whose error is in no
Retry rule of its state (read from the deployed definition; not run), and a ``redrive`` cell at a point that
a crash reaches only once (the retry replays a durable record and never reaches the point again, so Retry
always recovers first and the job cannot fail into a redrive). Those still run, the fault armed until a
redrive: n/a only once the run confirms it (recovered without a redrive, every invariant held); a job that
does fail is redriven and judged like any redrive cell.

Also the at-least-once cell: the app synthesized with ``child_execution_type: EXPRESS`` (a second stack in the
same cloud) and one document delivered twice at once must make one model call and one result.

The package, one idea a module: ``matrix`` (the cells, their selection and applicability), ``outcome`` (a
cell's outcome and how two jobs are compared), ``observed`` (what a job left behind), ``invariants`` (the
checks), ``run`` (one run's jobs and cells), ``runner`` (the whole run, cells side by side), ``table`` (the
printed matrix).
"""

from docagent.drills.chaos.invariants import check
from docagent.drills.chaos.matrix import (
    AT_LEAST_ONCE_CHECKS,
    BATCH_POINTS,
    CHECKS,
    DOCUMENT_POINTS,
    IN_STEP_POINTS,
    MODE_ERRORS,
    MODE_WORDS,
    MODES,
    POINT_STATES,
    POINTS,
    REACHED_ONCE,
    RECOVERIES,
    REDUCED,
    Cell,
    Mode,
    Recovery,
    expected_cost,
    full_matrix,
    is_probe,
    not_applicable,
    parse_choices,
    select_cells,
)
from docagent.drills.chaos.observed import Observed, observe
from docagent.drills.chaos.outcome import (
    IGNORED_REPORT_FIELDS,
    IGNORED_RESULT_FIELDS,
    CellOutcome,
    Status,
    canonical,
    differing_fields,
)
from docagent.drills.chaos.run import INPUT_PREFIX, STACK_NAME, ChaosRun
from docagent.drills.chaos.runner import (
    DEFAULT_DOCUMENTS,
    DEFAULT_PARALLEL,
    DEFAULT_TIME_SCALE,
    EXPRESS_PROFILE,
    EXPRESS_STACK_NAME,
    MAX_WORKERS_PER_FUNCTION,
    START_STAGGER_SECONDS,
    run_chaos,
)
from docagent.drills.chaos.table import print_matrix

__all__ = [
    "AT_LEAST_ONCE_CHECKS",
    "BATCH_POINTS",
    "CHECKS",
    "DEFAULT_DOCUMENTS",
    "DEFAULT_PARALLEL",
    "DEFAULT_TIME_SCALE",
    "DOCUMENT_POINTS",
    "EXPRESS_PROFILE",
    "EXPRESS_STACK_NAME",
    "IGNORED_REPORT_FIELDS",
    "IGNORED_RESULT_FIELDS",
    "INPUT_PREFIX",
    "IN_STEP_POINTS",
    "MAX_WORKERS_PER_FUNCTION",
    "MODES",
    "MODE_ERRORS",
    "MODE_WORDS",
    "POINTS",
    "POINT_STATES",
    "REACHED_ONCE",
    "RECOVERIES",
    "REDUCED",
    "STACK_NAME",
    "START_STAGGER_SECONDS",
    "Cell",
    "CellOutcome",
    "ChaosRun",
    "Mode",
    "Observed",
    "Recovery",
    "Status",
    "canonical",
    "check",
    "differing_fields",
    "expected_cost",
    "full_matrix",
    "is_probe",
    "not_applicable",
    "observe",
    "parse_choices",
    "print_matrix",
    "run_chaos",
    "select_cells",
]
