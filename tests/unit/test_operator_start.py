"""``docagent start`` tried as a new user would, against moto: documents outside the configured source
locations are refused before anything starts, ``--from-dir`` never follows a link out of the folder, and
Ctrl-C during the upload says how to resume."""

from __future__ import annotations

import json
import os
from typing import Any

import boto3
import pytest

from docagent import cli
from docagent.operations import sources
from docagent.operations.context import OperatorContext
from docagent.operations.sessions import new_session
from docagent.operations.sources import Limits
from tests.support import BUCKET

STATE_MACHINE = "DocAgent-DocumentReview"
INVOICE = "Invoice INV-1 for customer CUST-00001, total 12.50 EUR\n"


@pytest.fixture
def ctx(cloud, monkeypatch) -> OperatorContext:
    """An operator context on moto's job bucket and a state machine named as the stack's."""
    arn = boto3.client("stepfunctions").create_state_machine(
        name=STATE_MACHINE,
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
        roleArn="arn:aws:iam::123456789012:role/docagent",
    )["stateMachineArn"]
    context = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={"BucketName": BUCKET, "StateMachineArn": arn},
        session=new_session(),
    )
    monkeypatch.setattr(OperatorContext, "from_args", classmethod(lambda cls, args: context))
    return context


def run(capsys, *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = cli.main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def executions(ctx: OperatorContext) -> list[str]:
    listed = ctx.client("stepfunctions").list_executions(stateMachineArn=ctx.state_machine_arn)
    return [execution["name"] for execution in listed["executions"]]


def uploaded(prefix: str) -> list[str]:
    listed = boto3.client("s3").list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(item["Key"] for item in listed.get("Contents", []))


def test_documents_outside_the_source_locations_are_refused_before_anything_starts(ctx, capsys, tmp_path):
    s3 = boto3.client("s3")
    for key in ("incoming/b1/a.txt", "other/b.txt", "jobs/old/approval.json"):
        s3.put_object(Bucket=BUCKET, Key=key, Body=INVOICE.encode())

    code, refused = run(capsys, "start", "--job-id", "j-prefix", "--prefix", f"s3://{BUCKET}/jobs/old/")
    assert code == 2 and refused["error_type"] == "OutsideSourceLocations"
    assert refused["outside"] == [f"s3://{BUCKET}/jobs/old/"]
    assert refused["source_locations"] == [f"s3://{BUCKET}/incoming/"]
    assert f"s3://{BUCKET}/jobs/old/" in refused["error"] and f"s3://{BUCKET}/incoming/" in refused["error"]

    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(["incoming/b1/a.txt", "other/b.txt", "jobs/old/approval.json"]))
    code, refused = run(capsys, "start", "--job-id", "j-manifest", "--manifest", str(manifest))
    assert code == 2 and refused["error_type"] == "OutsideSourceLocations"
    assert refused["outside"] == [f"s3://{BUCKET}/other/b.txt", f"s3://{BUCKET}/jobs/old/approval.json"]
    assert executions(ctx) == [], "nothing started"

    # A location the deployment configures is accepted, as PrepareJob accepts it.
    configured = Limits(max_document_bytes=4000, max_documents=10, source_locations="incoming/,other/")
    monkeypatch = pytest.MonkeyPatch()
    with monkeypatch.context() as patch:
        patch.setattr(sources, "deployed_limits", lambda ctx: configured)
        manifest.write_text(json.dumps(["incoming/b1/a.txt", "other/b.txt"]))
        code, started = run(capsys, "start", "--job-id", "j-manifest", "--manifest", str(manifest))
    assert code == 0 and started["started"] is True
    assert executions(ctx) == ["j-manifest"]


def test_from_dir_never_follows_a_link_out_of_the_folder(ctx, capsys, tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:the secret a link points at\n")
    folder = tmp_path / "batch"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text(INVOICE)
    (folder / "sub" / "b [draft].txt").write_text(INVOICE.replace("INV-1", "INV-2"))
    (folder / "out.txt").symlink_to(secret)
    (folder / "outdir").symlink_to(secret.parent, target_is_directory=True)
    (folder / "again.txt").symlink_to(folder / "a.txt")  # inside: followed once
    (folder / "sub" / "loop").symlink_to(folder, target_is_directory=True)  # back into a folder it is in
    (folder / "broken.txt").symlink_to(folder / "missing.txt")
    os.mkfifo(folder / "pipe")

    code, started = run(capsys, "start", "--job-id", "j-links", "--from-dir", str(folder))
    assert code == 0, started
    prefix = "incoming/j-links/"
    assert uploaded(prefix) == [f"{prefix}a.txt", f"{prefix}again.txt", f"{prefix}sub/b [draft].txt"]
    skipped = {item["path"]: item["reason"] for item in started["source"]["skipped"]}
    assert set(skipped) == {"out.txt", "outdir", "sub/loop", "broken.txt", "pipe"}
    assert "out of the folder" in skipped["out.txt"] and str(secret) in skipped["out.txt"]
    assert "out of the folder" in skipped["outdir"]
    assert "loop" in skipped["sub/loop"] and "broken" in skipped["broken.txt"]
    assert "regular file" in skipped["pipe"]
    s3 = boto3.client("s3")
    bodies = [s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() for key in uploaded(prefix)]
    assert all(b"secret" not in body for body in bodies)

    # The human line says what was skipped, too, with the names as written.
    folder2 = tmp_path / "batch2"
    folder2.mkdir()
    (folder2 / "[bold]x[red].txt").write_text(INVOICE)
    (folder2 / "[out].txt").symlink_to(secret)
    capsys.readouterr()
    assert cli.main(["start", "--job-id", "j-links-2", "--from-dir", str(folder2)]) == 0
    printed = capsys.readouterr().out
    assert "skipped [out].txt: a symbolic link out of the folder" in printed


def test_a_folder_of_links_out_only_is_no_documents(ctx, capsys, tmp_path):
    folder = tmp_path / "links"
    folder.mkdir()
    (folder / "passwd").symlink_to("/etc/passwd")
    code, refused = run(capsys, "start", "--job-id", "j-none", "--from-dir", str(folder))
    assert code == 2 and refused["error_type"] == "NoDocuments"
    assert [item["path"] for item in refused["skipped"]] == ["passwd"]
    assert executions(ctx) == []


def test_ctrl_c_during_the_upload_says_how_to_resume(ctx, capsys, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for index in range(3):
        (folder / f"doc-{index}.txt").write_text(INVOICE.replace("INV-1", f"INV-{index}"))
    s3 = ctx.client("s3")
    put_object = s3.put_object

    def interrupted(**kwargs: Any) -> Any:
        if kwargs["Key"].endswith("doc-1.txt"):
            raise KeyboardInterrupt
        return put_object(**kwargs)

    s3.put_object = interrupted
    again = ("start", "--job-id", "j-ctrl-c", "--from-dir", str(folder), "--require-approval")
    code, refused = run(capsys, *again)
    assert code == 130 and refused["error_type"] == "UploadInterrupted"
    assert refused["resume"] == f"docagent start --job-id j-ctrl-c --from-dir {folder} --require-approval"
    assert "not started" in refused["error"] and executions(ctx) == []
    before = uploaded("incoming/j-ctrl-c/")
    assert "incoming/j-ctrl-c/doc-1.txt" not in before

    s3.put_object = put_object  # the same command again resumes: the rest is uploaded, the job starts
    code, started = run(capsys, *again)
    assert code == 0 and started["started"] is True
    assert started["source"]["uploaded"] == 3 - len(before)
    assert len(uploaded("incoming/j-ctrl-c/")) == 3

    s3.put_object = interrupted  # the human message: no traceback, the command to resume
    capsys.readouterr()
    assert cli.main(["start", "--job-id", "j-ctrl-c-2", "--from-dir", str(folder)]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and "docagent start --job-id j-ctrl-c-2 --from-dir" in err


def test_from_dir_refuses_a_file_name_s3_cannot_carry_before_uploading_anything(ctx, capsys, tmp_path):
    """A newline in a file name (issue #39): the start is refused naming the file, and no file of the folder
    is uploaded (before, the others were left under incoming/JOB/ with no job)."""
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "a.txt").write_text(INVOICE)
    (folder / "z.txt").write_text(INVOICE.replace("INV-1", "INV-2"))
    (folder / "bad\nname.txt").write_text(INVOICE.replace("INV-1", "INV-3"))

    code, refused = run(capsys, "start", "--job-id", "j-names", "--from-dir", str(folder))
    assert code == 2 and refused["error_type"] == "BadFileName"
    assert "'bad\\nname.txt'" in refused["error"] and "control character" in refused["error"]
    assert uploaded("incoming/j-names/") == []
    assert executions(ctx) == []


@pytest.mark.parametrize("name", ["quote\u202eexe.txt", "a\u2066b.txt", "c1\x85.txt"])
def test_a_name_that_reorders_or_controls_what_is_shown_is_refused(ctx, capsys, tmp_path, name):
    """Issue #49: a name holding U+202E (right-to-left override) showed ``...txt.exe`` as ``...exe.txt``."""
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "a.txt").write_text(INVOICE)
    (folder / name).write_text(INVOICE.replace("INV-1", "INV-2"))
    code, refused = run(capsys, "start", "--job-id", "j-bidi", "--from-dir", str(folder))
    assert code == 2 and refused["error_type"] == "BadFileName"
    assert repr(name) in refused["error"] and name not in refused["error"]
    assert uploaded("incoming/j-bidi/") == []
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(["incoming/b1/a.txt", f"incoming/b1/{name}"]))
    code, refused = run(capsys, "start", "--job-id", "j-bidi-2", "--manifest", str(manifest))
    assert (
        code == 2
        and refused["error_type"] == "BadFileName"
        and repr(f"incoming/b1/{name}") in refused["error"]
    )
    assert executions(ctx) == []


def test_a_start_without_a_job_id_twice_is_one_job(ctx, capsys, tmp_path):
    """#40: the job id is derived from the definition's version and the documents: the same inbox started
    twice is one job, another inbox another job."""
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "a.txt").write_text(INVOICE)
    (folder / "b.txt").write_text(INVOICE.replace("INV-1", "INV-2"))

    code, first = run(capsys, "start", "--from-dir", str(folder))
    assert code == 0 and first["started"] is True and first["job_id_derived"] is True
    job_id = first["job_id"]
    assert uploaded(f"incoming/{job_id}/") == [f"incoming/{job_id}/a.txt", f"incoming/{job_id}/b.txt"]
    code, second = run(capsys, "start", "--from-dir", str(folder))
    assert code == 0 and second["job_id"] == job_id and second["started"] is False
    assert executions(ctx) == [job_id]

    (folder / "b.txt").write_text(INVOICE.replace("INV-1", "INV-3"))
    code, third = run(capsys, "start", "--from-dir", str(folder))
    assert code == 0 and third["job_id"] != job_id and third["started"] is True
    assert sorted(executions(ctx)) == sorted([job_id, third["job_id"]])
