"""``--out DIR``: the run as JSON (``eval.json``), a Markdown page (``eval.md``) and PNG plots (matplotlib,
Agg backend): per-field F1 bars, the distribution of document scores and, with a baseline, each field's
change."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from docagent.evaluation.figures import EvalOutput, EvalRun, FieldOutcome, GateResult
from docagent.evaluation.splits import split_lines
from docagent.operations.context import RefusedError

EXTRA_MODULES = {"rapidfuzz": "rapidfuzz", "scipy": "scipy", "dateutil": "python-dateutil"}
WORST_DOCUMENTS = 10


def require_extra(plots: bool) -> None:
    """Refuse (exit 2) naming what to install when the eval extra is missing, rather than a traceback."""
    wanted = dict(EXTRA_MODULES, **({"matplotlib": "matplotlib"} if plots else {}))
    missing = [package for module, package in wanted.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise RefusedError(
            "MissingExtra",
            f"docagent eval needs {', '.join(missing)}: pip install -c constraints.txt -e '.[eval]' "
            "(or `make setup`)",
        )


def write_report(output: EvalOutput, baseline: EvalRun | None, out_dir: str | Path) -> list[Path]:
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    plots = write_plots(output.run, baseline, output.gate, root)
    page = root / "eval.md"
    page.write_text(markdown(output, [p.name for p in plots]), encoding="utf-8")
    data = root / "eval.json"
    data.write_text(output.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return [data, page, *plots]


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("`", "\\`")


def how(outcome: FieldOutcome) -> str:
    """What went wrong with a field, in words."""
    if outcome.outcome == "wrong":
        return f"wrong ({outcome.comparator}, similarity {outcome.score:.2f})"
    return {"missing": "missing: none extracted", "extra": "extra: the label has none"}.get(
        outcome.outcome, outcome.outcome
    )


def markdown(output: EvalOutput, plots: list[str]) -> str:
    run = output.run
    lines = [
        f"# Evaluation of {_cell(run.definition.label())}",
        "",
        f"- mode: **{run.mode}**: {run.mode_meaning}",
        f"- job: {run.job_id or '(none)'}; {run.samples} labelled documents, "
        f"{run.results_matched} with a result",
        f"- convention: {run.convention}",
    ]
    if run.usage is not None:
        usage = run.usage
        cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
        lines.append(
            f"- model calls: {usage.model_calls}, tokens in/out: {usage.input_tokens}/{usage.output_tokens}, "
            f"cost on Bedrock: {cost} (prices as of {usage.prices_as_of})"
        )
    columns = (
        "field",
        "comparator",
        "weight",
        "F1",
        "precision",
        "recall",
        "accuracy",
        "wrong",
        "missing",
        "extra",
    )
    lines += ["", "## Fields, worst first", "", "| " + " | ".join(columns) + " |"]
    lines += ["| --- | --- |" + " ---: |" * (len(columns) - 2)]
    for f in run.fields:
        r = f.rates
        lines.append(
            f"| {_cell(f.path)} | {f.comparator} | {f.weight:g} | {r.f1:.3f} | {r.precision:.3f} | "
            f"{r.recall:.3f} | {r.accuracy:.3f} | {f.wrong} | {f.missing} | {f.extra} |"
        )
    lines += ["", "## Classes", "", "| class | documents | F1 | precision | recall | mean score |"]
    lines += ["| --- | ---: | ---: | ---: | ---: | ---: |"]
    for c in run.classes:
        lines.append(
            f"| {_cell(c.name)} | {c.documents} | {c.rates.f1:.3f} | {c.rates.precision:.3f} | "
            f"{c.rates.recall:.3f} | {c.mean_score:.3f} |"
        )
    if run.confusion is not None:
        matrix = run.confusion
        lines += [
            "",
            "## Classification",
            "",
            "| labelled \\ decided | " + " | ".join(map(_cell, matrix.predicted)) + " |",
        ]
        lines += ["| --- |" + " ---: |" * len(matrix.predicted)]
        for name, row in zip(matrix.classes, matrix.counts, strict=True):
            lines.append(f"| {_cell(name)} | " + " | ".join(map(str, row)) + " |")
    if run.splits is not None:  # docagent/evaluation/splits.py
        lines += ["", "## Splitting", "", *[f"- {_cell(line)}" for line in split_lines(run.splits)]]
    lines += ["", "## Worst documents", ""]
    worst = [d for d in run.documents if d.wrong][:WORST_DOCUMENTS]
    if not worst:
        lines.append("Every field of every document is right.")
    for document in worst:
        lines += [
            f"### {_cell(document.sample)}: score {document.score:.3f} ({_cell(document.status)})",
            "",
            "| field | label | extracted | how |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {_cell(o.path)} | {_cell(o.expected)} | {_cell(o.extracted)} | {how(o)} |"
            for o in document.wrong
        ]
        lines.append("")
    if output.gate is not None:
        lines += gate_markdown(output.gate)
    lines += ["", *[f"![{name}]({name})" for name in plots]]
    return "\n".join(lines) + "\n"


def gate_markdown(gate: GateResult) -> list[str]:
    verdict = "passed" if gate.passed else "FAILED"
    lines = [
        "",
        f"## Gate: {verdict}",
        "",
        f"Baseline {_cell(gate.baseline.label())} against {_cell(gate.current.label())}; "
        f"default margin {gate.default_margin:g} F1"
        + (f", per field {', '.join(f'{k}={v:g}' for k, v in gate.margins.items())}" if gate.margins else ""),
        "",
    ]
    for r in gate.regressions:
        now = "not compared" if r.current_f1 is None else f"{r.current_f1:.3f}"
        lines.append(
            f"- regression: {_cell(r.path)} F1 {r.baseline_f1:.3f} -> {now} "
            f"(drop {r.drop:.3f} > {r.margin:g})"
        )
    for d in gate.changed_documents:
        lines.append(
            f"- changed: {_cell(d.sample)} newly wrong {', '.join(d.newly_wrong) or '-'}; "
            f"now right {', '.join(d.now_right) or '-'}"
        )
    return lines


def write_plots(run: EvalRun, baseline: EvalRun | None, gate: GateResult | None, root: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    fields = list(reversed(run.fields))  # best at the top of a horizontal bar chart
    height = max(2.5, 0.35 * len(fields) + 1)
    figure, axes = plt.subplots(figsize=(7, height))
    axes.barh([f.path for f in fields], [f.rates.f1 for f in fields], color="#4c72b0")
    axes.set_xlim(0, 1)
    axes.set_xlabel("F1")
    axes.set_title(f"F1 per field ({run.mode})")
    figure.tight_layout()
    written.append(_save(figure, root / "field-f1.png"))
    plt.close(figure)

    figure, axes = plt.subplots(figsize=(7, 3.5))
    axes.hist([d.score for d in run.documents], bins=[i / 20 for i in range(21)], color="#55a868")
    axes.set_xlim(0, 1)
    axes.set_xlabel("weighted document score")
    axes.set_ylabel("documents")
    axes.set_title(f"Document scores ({run.samples} documents)")
    figure.tight_layout()
    written.append(_save(figure, root / "scores.png"))
    plt.close(figure)

    if baseline is not None and gate is not None:
        changes = sorted(gate.changes.items(), key=lambda item: item[1], reverse=True)
        figure, axes = plt.subplots(figsize=(7, max(2.5, 0.35 * len(changes) + 1)))
        colours = [
            "#c44e52" if value < -gate.margins.get(path, gate.default_margin) else "#8c8c8c"
            for path, value in changes
        ]
        axes.barh([path for path, _ in changes], [value for _, value in changes], color=colours)
        axes.axvline(0, color="black", linewidth=0.8)
        axes.set_xlabel("F1 change against the baseline")
        axes.set_title("Per-field change (red: beyond the margin)")
        figure.tight_layout()
        written.append(_save(figure, root / "change.png"))
        plt.close(figure)
    return written


def _save(figure: Any, path: Path) -> Path:
    figure.savefig(path, dpi=110)
    return path
