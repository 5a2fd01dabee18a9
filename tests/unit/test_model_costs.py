"""The price table's cheap models (functions/spend.py, looked up 2026-12-07) and the cost of 1,000 documents
per model and reading mode (docagent/operations/model_costs.py) that preflight and start print."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from docagent import project
from docagent.cli import build_parser
from docagent.operations import model_costs
from docagent.operations import preflight as preflight_module
from docagent.operations.json_shapes import JobEstimate
from functions import spend
from stacks.config import DEFAULT_CHEAP_MODEL_ID, load_config

LITE = "us.amazon.nova-lite-v1:0"

# (model id as a job names it, on-demand $ per 1M input, per 1M output, what Converse lets it read)
NOVA = (
    ("amazon.nova-micro-v1:0", 0.035, 0.14, {"text"}),
    ("us.amazon.nova-micro-v1:0", 0.035, 0.14, {"text"}),
    ("amazon.nova-lite-v1:0", 0.06, 0.24, {"text", "image", "document"}),
    ("eu.amazon.nova-lite-v1:0", 0.06, 0.24, {"text", "image", "document"}),
    ("amazon.nova-pro-v1:0", 0.80, 3.20, {"text", "image", "document"}),
)


@pytest.mark.parametrize(("model_id", "per_m_in", "per_m_out", "reads"), NOVA)
def test_each_nova_model_is_priced_on_demand_and_at_half_on_batch(
    model_id: str, per_m_in: float, per_m_out: float, reads: set[str]
) -> None:
    price = spend.model_price(model_id)
    assert (price.input_per_1000 * 1000, price.output_per_1000 * 1000) == pytest.approx((per_m_in, per_m_out))
    assert price.batch_per_1000() == pytest.approx((price.input_per_1000 / 2, price.output_per_1000 / 2))
    assert price.reads == frozenset(reads) and "2026-12-07" in price.source
    # a million tokens each way, priced as the budget and the actual cost price a call
    on_demand = spend.call_cost_usd(model_id, 1_000_000, 1_000_000)
    assert on_demand == pytest.approx(per_m_in + per_m_out)
    assert spend.call_cost_usd(model_id, 1_000_000, 1_000_000, "batch") == pytest.approx(on_demand / 2)


def test_a_model_without_a_dated_price_is_named_not_guessed() -> None:
    with pytest.raises(LookupError, match=r"amazon\.nova-2-lite-v1:0"):
        spend.model_price("amazon.nova-2-lite-v1:0")  # no AWS price found on 2026-12-07
    row = model_costs.cost_per_1000(["amazon.nova-2-lite-v1:0"], ["text"])[0]
    assert (row.priced, row.on_demand_usd, row.batch_usd) == (False, None, None)
    assert model_costs.lines([row]) == ["amazon.nova-2-lite-v1:0 text: no dated price in functions/spend.py"]


def test_a_thousand_documents_read_as_text_cost_the_measured_tokens() -> None:
    # make demo, 2026-12-07, the default definition (evidence by page, issue #54): 1,480 input and 125 output
    # tokens a document; Claude Haiku 4.5 alone would cost $2.11 per 1,000
    haiku = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
    rows = {
        (row.model_id, row.mode): row for row in model_costs.cost_per_1000([haiku, "amazon.nova-lite-v1:0"])
    }
    assert len(rows) == 6
    text = rows[(haiku, "text")]
    assert (text.input_tokens, text.output_tokens) == (1_480_000, 125_000)
    assert text.on_demand_usd == pytest.approx(1.480 + 0.625) and text.batch_usd == pytest.approx(2.105 / 2)
    assert text.reads is None  # Haiku 4.5's Converse features are not recorded in the table
    lite = rows[("amazon.nova-lite-v1:0", "text")]
    assert lite.on_demand_usd == pytest.approx(round(1480 * 0.00006 + 125 * 0.00024, 4))
    # pages as images or read visually take more input than their text, at every price
    for model in (haiku, "amazon.nova-lite-v1:0"):
        usd = [rows[(model, mode)].on_demand_usd or 0 for mode in ("text", "image", "visual")]
        assert usd == sorted(usd) and usd[0] < usd[2]


def test_nova_micro_reads_no_document_block_nor_image() -> None:
    rows = model_costs.cost_per_1000(["amazon.nova-micro-v1:0"])
    assert [row.reads for row in rows] == [False, False, False]
    assert all("does not let this model read" in line for line in model_costs.lines(rows))


def test_the_job_figure_is_the_first_model_read_the_definitions_way() -> None:
    lite = "amazon.nova-lite-v1:0"
    per_1000 = model_costs.per_1000(lite, model_costs.mode("text")).on_demand_usd
    assert per_1000 is not None
    assert model_costs.job_model_usd(200, lite, "auto") == pytest.approx(per_1000 / 5, abs=1e-4)
    assert (
        model_costs.job_model_usd(1000, lite, "visual")
        == model_costs.per_1000(lite, model_costs.mode("visual")).on_demand_usd
    )
    assert model_costs.job_model_usd(1000, "amazon.nova-2-lite-v1:0", "text") is None


def test_preflight_prints_the_cost_per_1000_of_the_definitions_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`docagent preflight --documents 1000000 [--definition FOLDER] [--json]`: 1,000 documents' model cost by
    model and reading mode, on-demand and batch (the --json shape is the documented JobEstimate)."""
    config = load_config({"max_documents": 1_000_000, "default_definition": "invoices"})  # as cdk.json
    args = build_parser().parse_args(["preflight", "--documents", "1000000"])
    default = JobEstimate.model_validate(args.estimate(args, config))
    # no --definition: the default definition's models (examples/invoices, the default cascade), cheap first,
    # and the job priced at the cheap model (a floor)
    assert [(row.model_id, row.mode) for row in default.per_1000] == [
        (model, mode)
        for model in (DEFAULT_CHEAP_MODEL_ID, config.model_id)
        for mode in ("text", "image", "visual")
    ]
    assert set(config.model_ids()) == {config.model_id, DEFAULT_CHEAP_MODEL_ID}  # grants cover both
    assert DEFAULT_CHEAP_MODEL_ID in default.cost_covers and default.on_demand.usd < 0.5 * 1_000_000 / 1000
    job = tmp_path / "cascade"
    shutil.copytree(project.ROOT / "examples" / "invoices", job)
    definition = json.loads((job / "job.json").read_text())
    (job / "job.json").write_text(json.dumps({**definition, "models": [LITE, config.model_id]}))
    args = build_parser().parse_args(["preflight", "--documents", "1000000", "--definition", str(job)])
    estimate = JobEstimate.model_validate(args.estimate(args, config))
    assert [row.model_id for row in estimate.per_1000] == [LITE] * 3 + [config.model_id] * 3
    cheap = estimate.per_1000[0]
    assert cheap.on_demand_usd is not None and cheap.batch_usd == pytest.approx(
        cheap.on_demand_usd / 2, abs=1e-4
    )
    preflight_module._print(
        {"target": "local", "region": "us-east-1", "model_id": config.model_id, "checks": [], "ok": True}
        | {"estimate": estimate.model_dump()}
    )
    printed = capsys.readouterr().out
    assert (
        f"{LITE} text: ${cheap.on_demand_usd:,.2f} on-demand, ${cheap.batch_usd:,.2f} batch per 1,000"
        in printed
    )
