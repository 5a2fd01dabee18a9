"""The experiment's local-cloud strategies on a small job: the product (durable per document) and the
Distributed Map with an ItemBatcher (durable per batch), the Lambda worker killed after document 4's model
call until the job is redriven."""

from __future__ import annotations

import pytest

from docagent.drills.experiment.cloud import CloudSession
from docagent.localcloud.bedrock.model_faults import model_faults_of

# One local cloud per process: these start their own (`make test` runs them apart from the session cloud).
pytestmark = [pytest.mark.integration, pytest.mark.own_cloud]

DOCUMENTS, BATCH, KILL_AT = 6, 3, 4


def test_per_document_repeats_nothing_and_per_batch_repeats_its_batch(tmp_path):
    with CloudSession(tmp_path / "cloud", time_scale=0.1, batch_size=BATCH) as session:
        clean, expected = session.run("per batch", DOCUMENTS, None, None)
        batch, _ = session.run("per batch", DOCUMENTS, KILL_AT, expected)
        product, _ = session.run("per document", DOCUMENTS, KILL_AT, expected)

    assert (clean.results, clean.repeated_model_calls, clean.tickets) == (DOCUMENTS, 0, 1)
    # The batch [3, 4, 5] dies at document 4 on its first attempt and its three retries; after the redrive it
    # runs whole: documents 3 and 4 were called five times each, document 5 once.
    assert batch.repeated_documents == 2
    assert batch.repeated_model_calls == 8
    assert product.repeated_model_calls == 0, "the journalled model call is reused after the redrive"
    for run in (batch, product):
        assert run.correct and run.results == DOCUMENTS and run.tickets == 1
        assert run.recovery_seconds is not None and run.recovery_seconds > 0
        assert run.storage_bytes > 0


def test_the_model_latency_is_paid_by_the_local_clouds_model_too(tmp_path):
    # --model-latency-ms: the worker strategies sleep it in each model call; the cloud strategies' local
    # Bedrock answers after it, so "overhead vs none" compares like with like.
    session = CloudSession(tmp_path / "cloud", time_scale=0.1, batch_size=BATCH, model_latency_ms=1500)
    session.cloud.start()
    try:
        faults = model_faults_of(session.cloud.endpoint)["faults"]
    finally:
        session.cloud.stop()
    assert faults["latency"] == 1.5
    assert CloudSession(tmp_path / "plain", time_scale=0.1, batch_size=BATCH).cloud.model_faults is None
