"""The local cloud's journal: what a kill -9 can leave on disk, and which requests are kept."""

from __future__ import annotations

import datetime
import io

from docagent.localcloud.journal import Journal, dumps
from docagent.localcloud.persistence import is_journaled


def test_records_come_back_in_order_with_their_types(tmp_path):
    journal = Journal(tmp_path / "journal.log")
    moment = datetime.datetime(2026, 11, 30, 12, 0, tzinfo=datetime.UTC)
    journal.append({"t": "a", "at": moment, "body": b"\x00\xffbinary"})
    journal.append({"t": "b", "n": 2}, durable=False)
    journal.close()
    records = list(Journal(tmp_path / "journal.log").records())
    assert records == [{"t": "a", "at": moment, "body": b"\x00\xffbinary"}, {"t": "b", "n": 2}]


def test_a_record_cut_in_half_is_dropped_and_cut_off_before_the_next_append(tmp_path):
    path = tmp_path / "journal.log"
    whole = dumps({"t": "whole"})
    torn = dumps({"t": "torn", "body": "x" * 100})[:40]  # the process died mid-write
    path.write_bytes(whole + torn)
    journal = Journal(path)
    assert journal.dropped_bytes == len(torn)
    journal.append({"t": "after"})
    journal.close()
    assert [record["t"] for record in Journal(path).records()] == ["whole", "after"]


def test_a_corrupted_record_ends_the_journal_there(tmp_path):
    path = tmp_path / "journal.log"
    first, second, third = (dumps({"t": name}) for name in ("one", "two", "three"))
    damaged = second.replace(b'"two"', b'"tw0"')  # same length, wrong checksum
    path.write_bytes(first + damaged + third)
    assert [record["t"] for record in Journal(path).records()] == ["one"]


def _environ(method: str, path: str = "/", body: bytes = b"", **headers: str) -> dict[str, object]:
    environ: dict[str, object] = {"REQUEST_METHOD": method, "PATH_INFO": path, "wsgi.input": io.BytesIO(body)}
    environ.update({f"HTTP_{name.upper()}": value for name, value in headers.items()})
    return environ


def test_changes_are_journaled_reads_and_executions_are_not():
    assert is_journaled(_environ("PUT", "/bucket/key"), b"data")
    assert is_journaled(_environ("POST", X_AMZ_TARGET="DynamoDB_20120810.PutItem"), b"{}")
    assert is_journaled(_environ("POST", X_AMZ_TARGET="AWSStepFunctions.CreateStateMachine"), b"{}")
    assert not is_journaled(_environ("GET", "/bucket/key"), b"")
    assert not is_journaled(_environ("POST", X_AMZ_TARGET="DynamoDB_20120810.Query"), b"{}")
    assert not is_journaled(_environ("POST", X_AMZ_TARGET="AWSStepFunctions.StartExecution"), b"{}")
    assert not is_journaled(_environ("POST", X_AMZ_TARGET="AWSStepFunctions.SendTaskSuccess"), b"{}")
    assert not is_journaled(_environ("POST", "/2015-03-31/functions/f/invocations"), b"{}")
    form = {"CONTENT_TYPE": "application/x-www-form-urlencoded"}
    assert is_journaled({**_environ("POST"), **form}, b"Action=CreateRole&RoleName=r")
    assert not is_journaled({**_environ("POST"), **form}, b"Action=GetRole&RoleName=r")
