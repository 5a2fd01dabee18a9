"""A job's spend as the operator sees it (docs/design.md, "Budget"; docs/cost.md): the actual model cost from
the journal (per document, per class, per job, priced with functions/spend.py), the budget's ledger, why a
budget stopped the job and how to continue; and ``docagent budget JOB --max-usd N``."""

from __future__ import annotations

import argparse
from typing import Any

from docagent.operations.context import OperatorContext, OperatorError, command, emit, target_arguments
from docagent.operations.display import wide_console
from docagent.operations.json_shapes import BudgetExceededView, BudgetOutput, BudgetView, JobSpend
from docagent.operations.records import JobRecords
from functions import budget, spend
from functions.errors import BudgetExceeded
from functions.payloads.model_calls import ModelCallRecord

UNCLASSIFIED = "(no class)"
PACKET = "(packet)"  # a packet's calls that read no one section: its page classification (docs/design.md)


def classes_of_calls(document_calls: list[ModelCallRecord]) -> list[str]:
    """The class each of a document's calls is charged to: the class of the section it read (a packet's
    section's extract call gives the section's class); a call outside any section: the document's extracted
    class (its classification too), or, in a packet, ``(packet)``; no class at all: ``(no class)``."""
    sections: dict[str, str] = {}
    for call in document_calls:
        if call.purpose == "extract" and call.section_id is not None and call.class_name is not None:
            sections[call.section_id] = call.class_name
    whole = [c.class_name for c in document_calls if c.purpose == "extract" and c.section_id is None]
    rest = PACKET if sections else (whole[-1] if whole and whole[-1] else UNCLASSIFIED)
    return [sections.get(call.section_id or "", rest) for call in document_calls]


def actual_cost(calls: dict[str, list[ModelCallRecord]]) -> dict[str, Any]:
    """The journalled calls priced: ``model_cost_usd`` per job, ``by_document``, ``by_class`` (each call's
    class, ``classes_of_calls``), tokens, and the models with no dated price (their calls are not in the
    figures)."""
    by_document: dict[str, int] = {}
    by_class: dict[str, int] = {}
    unpriced: set[str] = set()
    input_tokens = output_tokens = count = 0
    for document_id, document_calls in calls.items():
        nano = 0
        for call, name in zip(document_calls, classes_of_calls(document_calls), strict=True):
            count += 1
            input_tokens += call.input_tokens
            output_tokens += call.output_tokens
            try:
                cost = spend.record_cost_nano(call)
            except LookupError:
                unpriced.add(call.model_id)
                continue
            nano += cost
            by_class[name] = by_class.get(name, 0) + cost
        by_document[document_id] = nano
    total = sum(by_document.values())
    return {
        "model_cost_usd": spend.to_usd(total),
        "per_document_usd": spend.to_usd(total // len(by_document)) if by_document else 0.0,
        "by_class": {name: spend.to_usd(nano) for name, nano in sorted(by_class.items())},
        "by_document": {document: spend.to_usd(nano) for document, nano in sorted(by_document.items())},
        "model_calls": count,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "unpriced_models": sorted(unpriced),
        "prices_as_of": spend.PRICES_AS_OF,
    }


def ledger_table(ctx: OperatorContext) -> budget.LedgerTable:
    return budget.LedgerTable(ctx.client("dynamodb"), ctx.output("IdempotencyTableName"))


def budget_view(records: JobRecords) -> BudgetView | None:
    """The job's budget ledger, or None: the job has no budget (or made no call under one yet)."""
    ledger = budget.read_ledger(records.job_id, ledger_table(records.ctx))
    if ledger is None:
        return None
    return BudgetView(
        max_cost_usd=ledger.budget_usd,
        spent_usd=ledger.spent_usd,
        reserved_usd=ledger.reserved_usd,
        settled_calls=ledger.settled_calls,
        calls_in_flight=len(ledger.reservations),
        warned=ledger.warned,
        stopped=ledger.stopped,
    )


def job_spend(records: JobRecords) -> JobSpend:
    """The actual cost and the budget; ``budget_exceeded`` when the budget stopped the job's calls: spent,
    budget, documents done and pending, and the commands that continue it."""
    view = budget_view(records)
    exceeded = None
    if view is not None and view.stopped and records.status != "RUNNING":
        total = len(records.entries())
        done = len(records.result_ids)
        exceeded = BudgetExceededView(
            error=BudgetExceeded.__name__,
            spent_usd=view.spent_usd,
            max_cost_usd=view.max_cost_usd,
            documents_done=done,
            documents_pending=total - done,
            commands=[f"docagent budget {records.job_id} --max-usd N", f"docagent redrive {records.job_id}"],
        )
    return JobSpend(**actual_cost(records.model_calls), budget=view, budget_exceeded=exceeded)


def next_step(job_id: str, exceeded: BudgetExceededView) -> str:
    return (
        f"the job's budget stopped it ({exceeded.error}: ${exceeded.spent_usd:.4f} spent of "
        f"${exceeded.max_cost_usd:.4f}, {exceeded.documents_done} documents done, "
        f"{exceeded.documents_pending} pending): `docagent budget {job_id} --max-usd N`, then "
        f"`docagent redrive {job_id}` (documents done are not called again)"
    )


def spend_line(figures: JobSpend) -> str:
    """One line for status and inspect: the actual cost and, with a budget, how much of it is spent."""
    line = (
        f"${figures.model_cost_usd:.4f} model ({figures.model_calls} calls, "
        f"${figures.per_document_usd:.6f} per document)"
    )
    view = figures.budget
    if view is not None:
        line += f"; budget ${view.max_cost_usd:.4f}, spent ${view.spent_usd:.4f}"
        line += " (stopped: BudgetExceeded)" if view.stopped else ""
    return line


# ------------------------------------------------------------------------------------------ budget


@command
def cmd_budget(args: argparse.Namespace) -> int:
    if not args.max_usd > 0:
        raise OperatorError(f"--max-usd must be more than 0, not {args.max_usd}")
    ctx = OperatorContext.from_args(args)
    records = JobRecords(ctx, args.job_id)
    records.require_execution()
    ledger = budget.set_budget(args.job_id, args.max_usd, ledger_table(ctx))
    answer = BudgetOutput(
        job_id=args.job_id,
        max_cost_usd=ledger.budget_usd,
        spent_usd=ledger.spent_usd,
        reserved_usd=ledger.reserved_usd,
        status=records.status,
        next=f"docagent redrive {args.job_id}" if records.status == "FAILED" else None,
    )

    def human() -> None:
        out = wide_console()
        out.print(
            f"job {args.job_id}: budget ${ledger.budget_usd:.4f}, spent ${ledger.spent_usd:.4f}, "
            f"reserved ${ledger.reserved_usd:.4f}"
        )
        if answer.next:
            out.print(f"continue it with `{answer.next}`")

    emit(args, answer.model_dump(mode="json"), human)
    return 0


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    parser = commands.add_parser(
        "budget",
        parents=[common, target_arguments()],
        help="set a job's budget (max_cost_usd); a job its budget stopped continues with `docagent redrive`",
    )
    parser.add_argument("job_id", metavar="JOB")
    parser.add_argument("--max-usd", type=float, required=True, help="the job's new budget in US dollars")
    parser.set_defaults(handler=cmd_budget)
