from __future__ import annotations

import pytest
from pydantic import ValidationError

from functions.payloads.document import DocumentResult
from functions.payloads.job import JobRequest, JobVersions
from tests.conftest import read_event


def test_job_request_event_is_valid():
    request = JobRequest.model_validate(read_event("job_request"))
    assert request.prefix == "incoming/batch-1/"
    assert request.options.fault is None


@pytest.mark.parametrize(
    ("request_data", "message"),
    [
        ({"job_id": "j1"}, "exactly one of 'prefix' or 'documents'"),
        ({"job_id": "j1", "prefix": "a/", "documents": ["a/x"]}, "exactly one of 'prefix' or 'documents'"),
        ({"job_id": "j1", "prefix": "incoming"}, "must end with '/'"),
        ({"job_id": "j1", "documents": ["a", "a"]}, "same key more than once"),
        ({"job_id": "bad id!", "prefix": "a/"}, "String should match pattern"),
        ({"job_id": "x" * 81, "prefix": "a/"}, "String should match pattern"),
        ({"job_id": "j1", "prefix": "a/", "colour": "red"}, "Extra inputs are not permitted"),
        ({"job_id": "j1", "prefix": "a/", "options": {"fault": {"point": "nowhere"}}}, "fault.point"),
    ],
)
def test_job_request_validation(request_data, message):
    with pytest.raises(ValidationError, match=message):
        JobRequest.model_validate(request_data)


def test_document_result_status_must_be_consistent():
    base = {
        "job_id": "j1", "document_id": "d1", "key": "k", "index": 0, "processed_at": "2026-11-29T10:00:00Z",
        "versions": JobVersions(model_id="m", prompt_version="p", prompt_sha256="0" * 64, code_version="c",
                                created_at="2026-11-29T10:00:00Z"),
    }  # fmt: skip
    with pytest.raises(ValidationError, match="extracted result needs a class and fields"):
        DocumentResult.model_validate({**base, "status": "extracted", "class_name": "c"})
    with pytest.raises(ValidationError, match="review result needs a class and fields and no error"):
        DocumentResult.model_validate(
            {**base, "status": "review", "class_name": "c", "fields": {}, "error": "E"}
        )
    review = DocumentResult.model_validate(
        {**base, "status": "review", "class_name": "c", "fields": {"a": 1}}
    )
    assert review.report_row(["a", "b"]).fields == {"a": "1", "b": None}
    with pytest.raises(ValidationError, match="rejected result needs an error"):
        DocumentResult.model_validate({**base, "status": "rejected"})
    rejected = DocumentResult.model_validate({**base, "status": "rejected", "error": "DocumentEmpty"})
    assert rejected.error == "DocumentEmpty"
