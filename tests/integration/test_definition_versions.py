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
        code, inspected = docagent("inspect", waiting.job_id)
        assert code == 0, inspected
        assert inspected["definition"]["version"] == f"invoices@{first[:12]}"
        assert (inspected["definition"]["present"], inspected["definition"]["current"]) == (True, False)
        assert _functions(aws) == before  # no deploy in between
    finally:
        code, restored = docagent("definition", "publish", str(EXAMPLE))  # the session's other tests
        assert code == 0 and restored["sha256"] == first, restored


def test_what_is_not_valid_or_not_published_starts_nothing(docagent, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(EXAMPLE, broken)
    (broken / "classes" / "invoice.prompt.txt").write_text("")

    code, refused = docagent("definition", "publish", str(broken))
    assert (code, refused["error_type"]) == (2, "DefinitionInvalid")
    assert refused["problems"] == [
        "classes/invoice.prompt.txt: $: the prompt is empty (fix: write the prompt's text)"
    ]

    code, again = docagent("definition", "publish", str(EXAMPLE))
    assert code == 0 and again["moved"] is False  # the same files: nothing to publish

    documents = tmp_path / "documents"
    documents.mkdir()
    (documents / "one.txt").write_text("Invoice INV-1 for CUST-00001: 10.00 EUR")
    code, unknown = docagent(
        "start", "--job-id", "integration-definition-unknown", "--from-dir", str(documents),
        "--definition", "contracts",
    )  # fmt: skip
    assert (code, unknown["error_type"]) == (3, "DefinitionNotPublished")
    assert "docagent definition publish" in unknown["error"]
    code, listed = docagent("list")
    assert "integration-definition-unknown" not in [job["job_id"] for job in listed["jobs"]]
    code, missing = docagent("definition", "show", "contracts")
    assert code == 3, missing
    code, started = docagent(
        "start", "--job-id", "integration-definition-job", "--from-dir", str(documents),
        "--job", str(EXAMPLE), "--wait",
    )  # fmt: skip
    assert code == 0, started
    assert started["request"]["definition"] == "invoices"
    assert started["definition"] == f"invoices@{again['sha256'][:12]}"
    assert started["final"]["status"] == "SUCCEEDED"
