"""``docagent eval --cascade CHEAP``: the labelled set run twice on fresh local clouds, by the strong model
alone (the deployment's model id) and by the cascade ``models: [CHEAP, STRONG]`` (functions/inference/
cascade.py), with F1 and model cost side by side (docs/evaluation.md, "Cheaper model first").

The local model answers every model id from the labels, so the cheap model is made the worse one by the
``--model-faults`` given, applied to its calls only (``models=CHEAP`` is added when the faults name no model):
the strong-alone run sees no fault, the cascade's cheap calls see them all.
"""

from __future__ import annotations

from docagent.evaluation.figures import CascadeComparison, CascadeSide, Counts, EvalRun, Rates, RunUsage


def cheap_faults(spec: str | None, cheap: str) -> str | None:
    """The ``--model-faults`` text kept to the cheap model's calls (``models=CHEAP`` unless it names one)."""
    if not spec or spec == "none":
        return None
    named = any(part.strip().startswith("models=") for part in spec.split(","))
    return spec if named else f"{spec},models={cheap}"


def side(name: str, models: list[str], run: EvalRun, *, decided: bool = True) -> CascadeSide:
    counts = Counts()
    for figures in run.classes:
        counts.tp += figures.counts.tp
        counts.fp += figures.counts.fp
        counts.fn += figures.counts.fn
        counts.tn += figures.counts.tn
    statuses = [document.status for document in run.documents]
    usage = run.usage
    return CascadeSide(
        name=name,
        models=models,
        job_id=run.job_id,
        f1=round(Rates.of(counts, counts.tp + counts.fp + counts.fn + counts.tn).f1, 4),
        accepted=statuses.count("extracted") if decided else None,
        review=statuses.count("review") if decided else None,
        rejected=statuses.count("rejected") if decided else None,
        model_calls=0 if usage is None else usage.model_calls,
        cost_usd=None if usage is None else usage.cost_usd,
        cost_by_model={} if usage is None else {m: u.cost_usd for m, u in usage.by_model.items()},
        calls_by_model={} if usage is None else {m: u.model_calls for m, u in usage.by_model.items()},
    )


def compare(
    cheap: str,
    faults: str | None,
    strong_alone: EvalRun,
    cascade: EvalRun,
    cheap_alone: EvalRun | None = None,
) -> CascadeComparison:
    """The runs side by side; ``faults``: the --model-faults given (kept to the cheap model);
    ``cheap_alone``: the cascade run's first-model extractions scored (its usage: the cheap model's)."""
    strong = strong_alone.definition.model_id or "?"
    alone, both = side("strong alone", [strong], strong_alone), side("cascade", [cheap, strong], cascade)
    first = None if cheap_alone is None else side("cheap alone", [cheap], cheap_alone, decided=False)
    share = round(both.cost_usd / alone.cost_usd, 4) if both.cost_usd is not None and alone.cost_usd else None
    return CascadeComparison(
        cheap_model=cheap,
        strong_model=strong,
        model_faults=cheap_faults(faults, cheap),
        documents=strong_alone.samples,
        strong_alone=alone,
        cascade=both,
        cheap_alone=first,
        cost_share=share,
        f1_change=round(both.f1 - alone.f1, 4),
    )


def cheap_usage(cascade: EvalRun, cheap: str) -> RunUsage | None:
    """The cascade run's usage narrowed to the cheap model's calls."""
    usage = cascade.usage
    mine = None if usage is None else usage.by_model.get(cheap)
    if usage is None or mine is None:
        return None
    return usage.model_copy(
        update={
            "model_calls": mine.model_calls,
            "input_tokens": mine.input_tokens,
            "output_tokens": mine.output_tokens,
            "model_ids": [cheap],
            "cost_usd": mine.cost_usd,
            "by_model": {cheap: mine},
        }
    )
