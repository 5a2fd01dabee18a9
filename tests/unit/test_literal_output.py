"""User text prints as written: job ids, file names, ``--by``, reasons and AWS errors are never read as rich
markup (``approve --by "[/]"`` crashed after the approval went through; ``[draft]`` in a name vanished)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from docagent import cli
from docagent.operations.context import OperatorContext
from docagent.operations.jobs import print_snapshot
from docagent.operations.progress import Snapshot
from docagent.operations.redrive_job import _print_plan
from docagent.operations.sessions import new_session
from docagent.operations.trace_job import print_trace
from functions.handlers import request_approval
from tests.fakes import FakeLambdaContext
from tests.support import BUCKET

PACKAGE = Path(__file__).resolve().parents[2] / "docagent"
MARKUP = "[bold]x[/bold] [/] [red]"  # printed through markup, this crashes ("[/]") or loses its brackets
# A rich markup tag in a string of the package: [red], [/red], [bold red], [dim], [/], [{colour}] ...
TAG = re.compile(  # an interpolated tag ``[{colour}]``; a Markdown link or image ``[{text}]({href})`` is none
    r"\[/?(?:bold|dim|italic|red|green|yellow|cyan|blue|magenta|white)(?: [a-z]+)?\]"
    r"|\[/\]|(?<![\w.!-])\[/?\{\}\](?!\()"
)


def _strings(tree: ast.AST) -> list[str]:
    """Every string of the module; an f-string with ``{}`` where it interpolates (``[{colour}]`` is a tag)."""
    found = []
    parts = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts.update(id(value) for value in node.values)
            found.append(
                "".join(value.value if isinstance(value, ast.Constant) else "{}" for value in node.values)
            )
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            found.append(node.value)
    return found


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == name)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
        )
    ]


def test_no_printer_of_the_package_reads_markup():
    """Every rich Console and TextColumn is made with markup=False, and no string holds a markup tag: colours
    are styles (Text.assemble), so no text can be taken for markup."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        where = path.relative_to(PACKAGE.parent)
        for call in _calls(tree, "Console") + _calls(tree, "TextColumn"):
            markup = [keyword for keyword in call.keywords if keyword.arg == "markup"]
            if not markup or not (
                isinstance(markup[0].value, ast.Constant) and markup[0].value.value is False
            ):
                problems.append(f"{where}:{call.lineno}: made without markup=False")
        problems += [f"{where}: markup in {text!r}" for text in _strings(tree) if TAG.search(text)]
    assert problems == []


def test_the_scan_finds_markup():
    """The scan above can fail: it finds what it looks for."""
    tree = ast.parse('Console()\nx = f"[red]{job}[/red] [{colour}]"\nTextColumn("[bold]{task.description}")')
    assert len(_calls(tree, "Console")) == 1 and len(_calls(tree, "TextColumn")) == 1
    assert [text for text in _strings(tree) if TAG.search(text)] == [
        "[red]{}[/red] [{}]",
        "[bold]{task.description}",
    ]


class AcceptingStepFunctions:
    def send_task_success(self, **kwargs: Any) -> None:
        pass

    def send_task_failure(self, **kwargs: Any) -> None:
        pass

    def describe_execution(self, executionArn: str) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        return {"executionArn": executionArn, "name": executionArn.rsplit(":", 1)[-1], "status": "RUNNING"}

    def get_execution_history(self, executionArn: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        """The job's RequestApproval asked with token-1 (approve checks the token against the history)."""
        payload = {"action": "request", "job_id": executionArn.rsplit(":", 1)[-1], "task_token": "token-1"}
        parameters = json.dumps({"FunctionName": "f", "Payload": payload})
        scheduled = {"type": "TaskScheduled", "taskScheduledEventDetails": {"parameters": parameters}}
        return {"events": [scheduled]}


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_approve_by_markup_like_text_prints_it_as_written(cloud, monkeypatch, capsys, decision):
    job = "job-markup"
    context = OperatorContext(
        endpoint=None,
        stack_name="DocAgent",
        outputs={
            "BucketName": BUCKET,
            "StateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:x",
        },
        session=new_session(),
    )
    context._clients["stepfunctions"] = AcceptingStepFunctions()
    monkeypatch.setattr(OperatorContext, "from_args", classmethod(lambda cls, args: context))
    request_approval.handler(
        {
            "action": "request",
            "job_id": job,
            "report": {
                "report_key": f"jobs/{job}/report.json",
                "documents": 1,
                "extracted": 1,
                "rejected": 0,
            },
            "task_token": "token-1",
            "execution_arn": f"arn:aws:states:us-east-1:123456789012:execution:x:{job}",
        },
        FakeLambdaContext(),
    )
    capsys.readouterr()
    assert cli.main([decision, job, "--by", "[/]", "--reason", MARKUP]) == 0
    printed = capsys.readouterr()
    assert f"job {job} " in printed.out and "([/]," in printed.out, printed


def snapshot_with(text: str) -> Snapshot:
    return Snapshot(
        job_id="job-[x]",
        execution_arn=f"arn:aws:states:us-east-1:123456789012:execution:x:{text}",
        status="FAILED",
        current_state=text,
        error=text,
        cause=text,
        started_at=None,
        stopped_at=None,
        redrive_count=0,
        redrive_date=None,
        documents={
            "total": 2,
            "succeeded": 1,
            "rejected": 0,
            "failed": 1,
            "running": 0,
            "pending": 0,
            "results_stored": 1,
        },
        map_run=None,
        approval=None,
    )


def test_status_redrive_and_trace_print_errors_and_names_as_written(capsys):
    print_snapshot(snapshot_with(MARKUP))
    assert MARKUP in capsys.readouterr().out
    plan: dict[str, Any] = {
        "job_id": "job-[x]",
        "eligible": False,
        "dry_run": False,
        "redriven": False,
        "status": "FAILED",
        "failed_state": "ReviewDocuments",
        "error": MARKUP,
        "reasons": [{"code": "[/]", "message": MARKUP}],
        "warnings": [MARKUP],
        "will_run": {
            "states": ["ReviewDocuments"],
            "conditional_states": [],
            "documents": [
                {
                    "document_id": "[b]doc[/b]",
                    "index": 1,
                    "last_status": "FAILED",
                    "error": MARKUP,
                    "has_result": False,
                }
            ],
            "document_count": 1,
        },
        "versions": {
            "differences": [{"field": "prompt_version", "pinned": "[/]", "deployed": "[x]", "blocking": True}]
        },
    }
    _print_plan(plan)
    printed = capsys.readouterr().out
    assert "job job-[x] cannot be redriven" in printed and f"[/]: {MARKUP}" in printed
    assert f"note: {MARKUP}" in printed and "[b]doc[/b]" in printed and "pinned [/], deployed [x]" in printed
    span = {
        "name": "document",
        "attempt": 0,
        "redrive_count": 0,
        "parent_span_id": None,
        "status": "failed",
        "duration_ms": 1.0,
        "outcome": MARKUP,
        "step": "model_call",
        "children": [],
        "attributes": {"gen_ai.request.model": "[/]"},
    }
    print_trace(
        {
            "job_id": "job-[x]",
            "status": "FAILED",
            "trace_id": "t",
            "redrive_count": 0,
            "spans": 1,
            "events": [{"timestamp": "now", "type": "ExecutionFailed", "error": MARKUP}],
            "steps": [{"step": "prepare", "status": "completed", "attempts": 1, "spans": [span]}],
            "documents": [],
            "counts": {},
            "xray": None,
        },
        show_all=True,
    )
    printed = capsys.readouterr().out
    assert (
        "job job-[x] FAILED" in printed
        and f"ExecutionFailed {MARKUP}" in printed
        and "→ " + MARKUP in printed
    )


def test_a_refusal_prints_its_message_as_written(capsys):
    capsys.readouterr()
    code = cli.main(["start", "--job-id", "[/]", "--prefix", "incoming/x/"])
    err = capsys.readouterr().err
    assert code == 2 and "'[/]'" in err, err
