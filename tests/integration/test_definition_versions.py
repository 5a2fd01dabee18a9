"""A definition is data: a new version published while a job waits for approval changes new jobs only. The
waiting job finishes on the version it pinned, a new job pins the new one, and no deploy happens in between
(the functions' code and environment are the same before and after)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from docagent import project
from tests.integration.test_approval import (
    APPROVAL,
    start,
    wait_for_pending_approval,
    wait_until_done,
)

EXAMPLE = project.ROOT / "examples" / "invoices"


def _functions(aws: Any) -> dict[str, tuple[str, dict[str, str]]]:
    """Each function's code hash and environment: what a deploy would change."""
    found = {}
    for function in aws("lambda").list_functions()["Functions"]:
        found[function["FunctionName"]] = (
            function["CodeSha256"],
            (function.get("Environment") or {}).get("Variables", {}),
        )
    return found


def _pinned(job: Any) -> str:
    manifest = job.records.read_json(f"jobs/{job.job_id}/manifest.json")
    assert manifest["versions"]["definition"] == "invoices"
    return str(manifest["versions"]["definition_sha256"])


def test_a_version_published_while_a_job_waits_changes_new_jobs_only(
    cloud, deployed, aws, docagent, tmp_path: Path
) -> None:
    code, listed = docagent("definition", "list")
    assert code == 0, listed
    assert "invoices" in [row["name"] for row in listed["definitions"]]  # the local deploy published it
    before = _functions(aws)

    waiting = start(cloud, deployed, "integration-definition-wait", documents=3, options=APPROVAL)
    wait_for_pending_approval(waiting)
    first = _pinned(waiting)

    changed = tmp_path / "invoices"
    shutil.copytree(EXAMPLE, changed)
    prompt = changed / "classes" / "invoice.prompt.txt"
    prompt.write_text(prompt.read_text() + "\nAnswer with the fields only.\n")
    try:
        code, published = docagent("definition", "publish", str(changed))
        assert code == 0, published
        assert (published["written"], published["moved"]) == (True, True)
        second = published["sha256"]
        assert second != first and published["previous"][0] == first

        new = start(cloud, deployed, "integration-definition-new", documents=2, options={})
        assert wait_until_done(new)["status"] == "SUCCEEDED"
        assert _pinned(new) == second

        code, approved = docagent("approve", waiting.job_id, "--by", "alice")
        assert code == 0, approved
        assert wait_until_done(waiting)["status"] == "SUCCEEDED"
        assert _pinned(waiting) == first  # finished on the version it started with

        code, shown = docagent("definition", "show", "invoices", "--version", first[:12])
        assert code == 0, shown
        assert (shown["sha256"], shown["current"]) == (first, False)
        assert _functions(aws) == before  # no deploy in between
    finally:
        code, restored = docagent("definition", "publish", str(EXAMPLE))  # the session's other tests
        assert code == 0 and restored["sha256"] == first, restored
