"""The ``docagent eval`` command: its arguments (cheap to import), its handler and its terminal view."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from docagent.evaluation.gate import DEFAULT_MARGIN
from docagent.kit.samples import SAMPLES_FOLDER
from docagent.localcloud.lifecycle import add_model_arguments, model_choice
from docagent.operations.context import EXIT_JOB_FAILED, EXIT_OK, RefusedError, emit, target_arguments

if TYPE_CHECKING:
    from docagent.drills.job_folder import JobFolder
    from docagent.evaluation.figures import FitReport, Mode
    from docagent.localcloud.bedrock.backends import ModelChoice

WORST_SHOWN = 5


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    evaluation = commands.add_parser(
        "eval",
        parents=[common, target_arguments()],
        help="score a job's results against labelled documents, per field; gate a change on a baseline",
        description="Scores extracted fields against labels (NAME.EXT + NAME.label.json) with comparators "
        "chosen from the job's JSON Schema: per field accuracy, precision, recall and F1, per class, per "
        "document. --samples DIR alone runs the documents through the real pipeline on a fresh local cloud "
        "(mode 'labels': measures the plumbing, not a model); --from-job JOB scores a job that already ran "
        "(with --aws: mode 'live'). Exit 1 when --baseline finds a field whose F1 dropped by more than its "
        "margin, or the job failed (docs/evaluation.md).",
    )
    evaluation.add_argument(
        "--job",
        metavar="PATH",
        help="a job definition folder: score under its classes (default: examples/invoices); its samples/ "
        "are the labelled set unless --samples names one",
    )
    evaluation.add_argument("--samples", metavar="DIR", help="the labelled set: NAME.EXT + NAME.label.json")
    evaluation.add_argument("--from-job", metavar="JOB", help="score this job's results (matched by key)")
    evaluation.add_argument(
        "--write-samples",
        metavar="DIR",
        help="write the demo's synthetic corpus with labels to DIR (a labelled set) and stop",
    )
    evaluation.add_argument(
        "--documents", type=int, default=20, help="documents for --write-samples (default 20)"
    )
    evaluation.add_argument("--seed", type=int, default=7, help="corpus seed for --write-samples (default 7)")
    evaluation.add_argument(
        "--model-faults",
        help="the local run's model faults, as for `docagent demo` (e.g. corrupt=invoice_number:0.5)",
    )
    evaluation.add_argument(
        "--cascade",
        metavar="CHEAP_MODEL_ID",
        help="run the labelled set twice on the local cloud: by the deployment's model alone and by the "
        "cascade models [CHEAP_MODEL_ID, that model] (the definition's job.json 'models'); print F1 and "
        "model cost side by side. --model-faults apply to the cheap model's calls only",
    )
    add_model_arguments(evaluation)
    evaluation.add_argument(
        "--out",
        metavar="DIR",
        help="write eval.json, eval.md and PNG plots (reliability.png among them) to DIR",
    )
    evaluation.add_argument(
        "--target-precision",
        type=float,
        default=0.99,
        help="the precision at which the accept-without-review rate is reported (default 0.99)",
    )
    evaluation.add_argument(
        "--calibrate",
        action="store_true",
        help="fit the confidence to the labels (with --job: the run without any fit, the fit written to the "
        "folder's calibration.json for its version); report the calibration error before and after on "
        "held-out documents (docs/evaluation.md, 'Fitted confidence')",
    )
    evaluation.add_argument("--save-baseline", metavar="FILE", help="record this run as a baseline")
    evaluation.add_argument(
        "--baseline", metavar="FILE", help="compare with a baseline: exit 1 on a regression"
    )
    evaluation.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help=f"F1 a field may lose against the baseline before the gate fails (default {DEFAULT_MARGIN})",
    )
    evaluation.add_argument(
        "--field-margin",
        action="append",
        default=[],
        metavar="FIELD=MARGIN",
        help="a field's own margin (repeat for several), e.g. summary=0.1",
    )
    evaluation.set_defaults(handler=cmd_eval)


def _refuse_mixed_arguments(args: argparse.Namespace) -> None:
    """A new local run's options with --from-job, or a deployment's without it: refused."""
    if (args.model or args.record) and args.from_job:
        raise RefusedError("BadArguments", "--model and --record are for a new local run, not --from-job")
    if args.cascade and args.from_job:
        raise RefusedError("BadArguments", "--cascade runs the labelled set anew: leave --from-job out")
    if args.model_faults and args.from_job:
        raise RefusedError("BadArguments", "--model-faults is for a new local run, not --from-job")
    if (args.aws or args.endpoint or args.local) and not args.from_job:
        raise RefusedError("BadArguments", "--aws, --endpoint and --local pick where --from-job's job ran")


def _model_choice(args: argparse.Namespace) -> ModelChoice | None:
    """``--model SPEC [--record]`` (docagent/localcloud/lifecycle.py), refused when malformed."""
    try:
        choice: ModelChoice | None = model_choice(args)
    except ValueError as error:
        raise RefusedError("BadArguments", str(error)) from None
    return choice


def _local_mode(choice: ModelChoice | None, samples: str) -> Mode:
    """What answered a local run: a real model, a real model's recordings, or the labels."""
    from docagent.localcloud.bedrock.recordings import RECORDING_SUFFIX

    if choice is not None and choice.kind != "labels":
        return "model"
    return "recorded" if any(Path(samples).rglob(f"*{RECORDING_SUFFIX}")) else "labels"


def cmd_eval(args: argparse.Namespace) -> int:
    from docagent.evaluation import gate as gates
    from docagent.evaluation import labelled_sets as samples
    from docagent.evaluation import report, runs, scoring
    from docagent.evaluation.comparators import SchemaError, check_schema
    from docagent.evaluation.figures import EvalOutput
    from docagent.operations.context import OperatorContext

    if args.write_samples:
        written = samples.write_samples(args.write_samples, args.documents, args.seed)
        payload = {"written": len(written) // 2, "directory": args.write_samples}
        emit(args, payload, lambda: Console(markup=False).print(
            f"wrote {len(written) // 2} labelled documents to {args.write_samples}"
        ))  # fmt: skip
        return EXIT_OK
    job_folder = _folder_of(args)
    if not args.samples:
        raise RefusedError(
            "NoSamples", "--samples DIR is needed (or --write-samples DIR to make a labelled set)"
        )
    _refuse_mixed_arguments(args)
    margins = gates.parse_margins(args.field_margin)
    report.require_extra(plots=bool(args.out))
    baseline = gates.load_baseline(args.baseline) if args.baseline else None
    definition = (
        samples.definition_of(job_folder.bundle) if job_folder is not None else samples.invoice_definition()
    )
    for name, schema in definition.classes.items():
        try:
            check_schema(schema)
        except SchemaError as error:
            raise RefusedError("SchemaInvalid", f"class {name}: {error}") from None
    labelled = samples.read_samples(args.samples, definition)
    if args.from_job:
        ctx = OperatorContext.from_args(args)
        found = runs.results_of_job(ctx, args.from_job, definition, labelled)
        mode: Mode = "live" if ctx.endpoint is None else "labels"
        alone = None  # --cascade runs its own jobs: refused with --from-job
    else:
        found, alone, mode = _run_locally(args, definition, labelled, job_folder)

    def scored(found: runs.JobResults) -> Any:
        return scoring.evaluate(
            definition,
            labelled,
            found.results,
            mode=mode,
            version=found.version,
            job_id=found.job_id,
            usage=found.usage,
            target_precision=args.target_precision,
        )

    run = scored(found).model_copy(update={"splits": found.splits})  # docagent/evaluation/splits.py
    # --cascade (docagent/evaluation/cascade.py): the strong model alone beside the cascade
    comparison = None if alone is None else _compared(args, scored, alone, found, run)
    output = EvalOutput(run=run, cascade=comparison)
    if args.calibrate and job_folder is not None:
        output.calibrated = _calibrated(job_folder, labelled, found, args.target_precision)
    if baseline is not None:
        output.gate = gates.compare(baseline, run, args.margin, margins)
    if args.save_baseline:
        output.written.append(str(gates.save_baseline(run, args.save_baseline)))
    if args.out:
        output.written += [str(path) for path in report.write_report(output, baseline, args.out)]
        output.written += _reliability(run, args.out)
    emit(args, output.model_dump(mode="json"), lambda: print_run(output, found.status))
    if found.status not in {"SUCCEEDED", "UNKNOWN"} or (output.gate is not None and not output.gate.passed):
        return EXIT_JOB_FAILED
    return EXIT_OK


def _compared(args: argparse.Namespace, scored: Any, alone: Any, found: Any, run: Any) -> Any:
    """--cascade's comparison: the strong model alone, the cascade, and the cheap model's own extractions."""
    from docagent.evaluation.cascade import cheap_usage, compare

    first = None
    if found.first_model is not None:
        first = scored(dataclasses.replace(found, results=found.first_model))
        first = first.model_copy(update={"usage": cheap_usage(run, args.cascade)})
    return compare(args.cascade, args.model_faults, scored(alone), run, first)


def _run_locally(
    args: argparse.Namespace, definition: Any, labelled: Any, job_folder: JobFolder | None
) -> tuple[Any, Any, Mode]:
    """A new local run of the labelled set (the cascade's with --cascade), the strong model alone's run with
    --cascade (else None), and what answered."""
    from docagent.evaluation import runs
    from docagent.evaluation.cascade import cheap_faults

    choice = _model_choice(args)
    faults = cheap_faults(args.model_faults, args.cascade) if args.cascade else args.model_faults

    def run(models: tuple[str, str] | None = None) -> runs.JobResults:
        return runs.run_local(
            definition,
            labelled,
            model_faults=faults,
            show_progress=not args.json,
            job_folder=job_folder,
            model=choice,
            models=models,
            alone=bool(args.cascade) and models is None,  # the strong model alone, not the default cascade
        )

    found, alone = run(), None
    if args.cascade:  # the same set again by [cheap, the deployment's model]
        strong = found.version.model_id or ""
        if strong == args.cascade:
            raise RefusedError("BadArguments", f"--cascade {strong} is the deployment's model already")
        alone, found = found, run((args.cascade, strong))
    return found, alone, _local_mode(choice, args.samples)


def _reliability(run: Any, out: str) -> list[str]:
    """--out's reliability plot (docagent/evaluation/calibration.py), when the run has a calibration."""
    from docagent.evaluation.calibration import reliability_plot

    if run.calibration is None:
        return []
    plot = Path(out) / "reliability.png"
    reliability_plot(run.calibration, str(plot))
    return [str(plot)]


def _folder_of(args: argparse.Namespace) -> JobFolder | None:
    """``--job``'s folder (its samples the labelled set), None without; with ``--calibrate``, its bundle
    without any fit (the run's confidence: the fixed table's)."""
    from docagent.kit.calibration_file import uncalibrated

    if args.calibrate and not args.job:
        raise RefusedError(
            "BadArguments", "--calibrate writes the fit into a definition folder: give --job PATH"
        )
    if not args.job:
        return None
    job_folder = _job_folder(args.job, calibrating=args.calibrate)
    own = job_folder.path / SAMPLES_FOLDER
    if args.samples and not args.from_job and Path(args.samples).resolve() != own.resolve():
        raise RefusedError(
            "BadArguments",
            f"--job runs its own samples ({own}): leave --samples out, or score a job with --from-job",
        )
    args.samples = args.samples or str(own)
    if args.calibrate:
        job_folder = dataclasses.replace(job_folder, bundle=uncalibrated(job_folder.bundle))
    return job_folder


def _calibrated(job_folder: JobFolder, labelled: Any, found: Any, target: float) -> FitReport:
    """--calibrate: the held-out figures, and the fit of every labelled document written to the folder."""
    from docagent.evaluation.fitting import observe, report
    from functions.payloads.calibration import CALIBRATION_FILE

    documents = observe(job_folder.bundle, labelled, found.results)
    if not documents:
        raise RefusedError(
            "NothingToFit", "no labelled document of the run has its class right: nothing to fit"
        )
    figures, fit = report(job_folder.bundle, documents, target, job_folder.bundle.uncalibrated_sha256)
    path = job_folder.path / CALIBRATION_FILE
    path.write_text(fit.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return figures.model_copy(update={"written": str(path)})


def _job_folder(path: str, *, calibrating: bool = False) -> JobFolder:
    """The definition folder of ``--job``, validated (every problem named) with its labelled samples."""
    from docagent.drills.job_folder import JobFolder

    try:
        return JobFolder.read(path, calibrating=calibrating)
    except ValueError as error:
        raise RefusedError("DefinitionInvalid", str(error)) from None


def print_run(output: Any, status: str) -> None:
    """The fields worst first, the worst documents with their wrong fields side by side, the gate. User text
    (labels, extracted values, sample names) is printed literally: rich markup in it is not interpreted."""
    from docagent.evaluation.report import how
    from docagent.evaluation.splits import split_lines
    from docagent.operations.display import wide_console

    out = wide_console()
    run = output.run
    out.print(Text(f"{run.definition.label()}: job {run.job_id} {status}, {run.samples} labelled documents"))
    out.print(Text(f"mode {run.mode}: {run.mode_meaning}", style="bold"))
    fields = Table(title="fields, worst first")
    for name in ("field", "comparator", "F1", "precision", "recall", "accuracy", "wrong", "missing", "extra"):
        fields.add_column(name, justify="left" if name in {"field", "comparator"} else "right")
    for f in run.fields:
        r = f.rates
        fields.add_row(
            Text(f.path), f.comparator, f"{r.f1:.3f}", f"{r.precision:.3f}", f"{r.recall:.3f}",
            f"{r.accuracy:.3f}", str(f.wrong), str(f.missing), str(f.extra),
        )  # fmt: skip
    out.print(fields)
    for c in run.classes:
        out.print(
            Text(
                f"class {c.name}: {c.documents} documents, F1 {c.rates.f1:.3f}, mean score {c.mean_score:.3f}"
            )
        )
    cases = {d.sample.split("#")[0]: d.case for d in run.documents if d.case}  # a packet's failed case
    for packet, case in sorted(cases.items()):
        out.print(Text(f"case {packet}: {case}"))
    for line in split_lines(run.splits) if run.splits is not None else []:
        out.print(Text(line))
    worst = [d for d in run.documents if d.wrong][:WORST_SHOWN]
    for document in worst:
        table = Table(title=Text(f"{document.sample}: score {document.score:.3f} ({document.status})"))
        for name in ("field", "label", "extracted", "how"):
            table.add_column(name)
        for o in document.wrong:
            table.add_row(Text(o.path), Text(_shown(o.expected)), Text(_shown(o.extracted)), how(o))
        out.print(table)
    if not worst:
        out.print("every field of every document is right")
    if run.calibration is not None:
        _print_calibration(out, run.calibration)
    if run.usage is not None:
        u = run.usage
        cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
        out.print(Text(f"model calls {u.model_calls}, tokens {u.input_tokens} in / {u.output_tokens} out, "
                       f"cost on Bedrock {cost} (prices as of {u.prices_as_of})"))  # fmt: skip
    if output.gate is not None:
        _print_gate(out, output.gate)
    if output.cascade is not None:
        print_cascade(out, output.cascade)
    if output.calibrated is not None:
        print_fit(out, output.calibrated)
    for path in output.written:
        out.print(Text(f"wrote {path}"))


def _print_gate(out: Console, gate: Any) -> None:
    compared = f"baseline {gate.baseline.label()} vs {gate.current.label()}"
    if gate.passed:
        out.print(Text(f"gate passed: no field lost more than its margin ({compared})", style="green"))
        return
    out.print(Text(f"gate FAILED ({compared}):", style="bold red"))
    for r in gate.regressions:
        now = "not compared" if r.current_f1 is None else f"{r.current_f1:.3f}"
        out.print(
            Text(f"  {r.path}: F1 {r.baseline_f1:.3f} -> {now} (drop {r.drop:.3f} > margin {r.margin:g})")
        )
    for check in gate.calibration:
        if check.regressed:
            out.print(
                Text(
                    f"  {check.figure}: {check.baseline:.3f} -> {check.current:.3f} (margin {check.margin:g})"
                )
            )
    for d in gate.changed_documents[:20]:
        out.print(Text(f"  {d.sample}: newly wrong {', '.join(d.newly_wrong) or '-'}; "
                       f"now right {', '.join(d.now_right) or '-'}"))  # fmt: skip


def _print_calibration(out: Console, calibration: Any) -> None:
    """Precision by confidence band (all fields, then each class) and the accept-without-review rate."""
    table = Table(title="calibration: precision by confidence band")
    table.add_column("fields")
    for band in calibration.overall.bands:
        table.add_column(f"{band.low:g}-{band.high:g}", justify="right")
    table.add_column("ECE", justify="right")
    for figures in [calibration.overall, *calibration.classes]:
        cells = [f"{b.precision:.2f} ({b.values})" if b.precision is not None else "-" for b in figures.bands]
        table.add_row(Text(figures.name), *cells, f"{figures.calibration_error:.3f}")
    out.print(table)
    rate = calibration.accept_without_review
    threshold = "none" if rate.threshold is None else f"{rate.threshold:.2f}"
    out.print(Text(f"accepted without review at {rate.target_precision:.0%} precision: {rate.accepted} of "
                   f"{rate.documents} documents ({rate.rate:.0%}), confidence >= {threshold}"))  # fmt: skip


def print_cascade(out: Console, comparison: Any) -> None:
    """--cascade: the strong model alone and the cascade, F1 and model cost side by side."""
    table = Table(title=f"cheaper model first: {comparison.documents} documents")
    for name in ("run", "models", "F1", "accepted", "review", "rejected", "calls", "model cost"):
        table.add_column(name, justify="left" if name in {"run", "models"} else "right")
    for side in (comparison.strong_alone, comparison.cheap_alone, comparison.cascade):
        if side is None:
            continue
        calls = ", ".join(f"{n} {model}" for model, n in side.calls_by_model.items())
        cost = "unknown" if side.cost_usd is None else f"${side.cost_usd:.6f}"
        table.add_row(
            side.name, Text(calls), f"{side.f1:.3f}", _count(side.accepted), _count(side.review),
            _count(side.rejected), str(side.model_calls), cost,
        )  # fmt: skip
    out.print(table)
    share = "unknown" if comparison.cost_share is None else f"{comparison.cost_share:.0%}"
    out.print(Text(f"the cascade: F1 {comparison.f1_change:+.3f}, model cost {share} of the strong model "
                   f"alone (cheap model's faults: {comparison.model_faults or 'none'})"))  # fmt: skip


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _shown(value: Any) -> str:
    return "(none)" if value is None else value if isinstance(value, str) else repr(value)


def print_fit(out: Console, fitted: Any) -> None:
    """--calibrate: the calibration error before and after on held-out documents, the share accepted."""
    out.print(
        Text(f"confidence fit ({fitted.validation}): {fitted.documents} documents, {fitted.values} values")
    )
    out.print(Text(f"calibration error (ECE): fixed table {fitted.before.calibration_error:.3f} -> fitted "
                   f"{fitted.after.calibration_error:.3f}"))  # fmt: skip
    share = fitted.at_target
    precision = "-" if share.precision is None else f"{share.precision:.0%}"
    out.print(
        Text(
            f"accepted without review at {share.target_precision:.0%} precision (the fit's threshold, "
            f"held out): {share.accepted} of {share.documents} ({share.share:.0%}), precision {precision}"
        )
    )
    if fitted.written:
        out.print(Text(f"wrote {fitted.written}"))
