"""A local cloud that is down, with its state kept, is named with how to start it; AWS is not tried."""

from __future__ import annotations

import pytest

from docagent import project
from docagent.operations.context import OperatorContext, OperatorError


def test_a_local_cloud_that_is_down_is_named_instead_of_trying_aws(tmp_path, monkeypatch):
    journal = tmp_path / "cloud-state" / "journal.log"
    monkeypatch.setattr(project, "LOCAL_CLOUD_FILE", tmp_path / "cloud.json")  # nothing runs
    monkeypatch.setattr(project, "LOCAL_STACK_FILE", tmp_path / "stack.json")
    monkeypatch.setattr(project, "LOCAL_JOURNAL", journal)
    assert not project.local_state_exists()
    journal.parent.mkdir(parents=True)
    journal.write_bytes(b"00000000 {}\n")
    assert project.local_state_exists()
    with pytest.raises(OperatorError) as refused:
        OperatorContext.resolve(None)
    assert refused.value.error_type == "LocalCloudDown" and refused.value.exit_code == 3
    assert "docagent local up --detach" in str(refused.value) and "--aws" in str(refused.value)
