"""The local cloud's journal: what a kill -9 can leave on disk, and which requests are kept."""

from __future__ import annotations

import datetime
import errno
import io
import os

import pytest

from docagent.localcloud.state.journal import (
    DamagedRecord,
    Journal,
    JournalCorruptError,
    JournalWriteError,
    dumps,
)
from docagent.localcloud.state.persistence import JournalingApp, is_journaled


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


def test_a_damaged_record_in_the_middle_is_named_and_nothing_is_dropped(tmp_path):
    path = tmp_path / "journal.log"
    first, second, third, fourth = (dumps({"t": name}) for name in ("one", "two", "three", "four"))
    damaged = second.replace(b'"two"', b'"tw0"')  # same length, wrong checksum
    path.write_bytes(first + damaged + third + fourth)
    with pytest.raises(JournalCorruptError) as refused:
        Journal(path)
    assert refused.value.damaged == [
        DamagedRecord(number=2, offset=len(first), length=len(second), records_after=2, salvaged_offset=None)
    ]
    assert f"record 2 at byte {len(first)}" in str(refused.value)
    assert "2 whole record(s) after it" in str(refused.value)
    assert "--skip-corrupt" in str(refused.value)
    assert path.read_bytes() == first + damaged + third + fourth  # refusing changes nothing


def test_repair_keeps_every_whole_record_and_sets_exactly_the_damaged_bytes_aside(tmp_path):
    path = tmp_path / "journal.log"
    first, second, third = (dumps({"t": name}) for name in ("one", "two", "three"))
    damaged = second.replace(b'"two"', b'"tw0"')
    path.write_bytes(first + damaged + third + b"0123")  # and a torn last record
    journal = Journal(path, repair=True)
    assert [record.number for record in journal.set_aside] == [2]
    assert journal.dropped_bytes == 4 and journal.torn_tail_offset == len(first + damaged + third)
    assert [record["t"] for record in journal.records()] == ["one", "three"]
    assert (tmp_path / f"journal.log.corrupt-{len(first)}").read_bytes() == damaged
    journal.append({"t": "after"})
    journal.close()
    assert [record["t"] for record in Journal(path).records()] == ["one", "three", "after"]  # no refusal now


def test_a_torn_write_followed_by_whole_records_loses_none_of_them(tmp_path):
    """What an older journal left after a failed buffered write: half a record, then whole ones."""
    path = tmp_path / "journal.log"
    names = ("one", "torn", "after", "last")
    first, torn, after, last = (dumps({"t": name, "pad": "x" * 50}) for name in names)
    path.write_bytes(first + torn[:30] + after + last)
    with pytest.raises(JournalCorruptError) as refused:
        Journal(path)
    assert refused.value.damaged[0].salvaged_offset == len(first) + 30
    assert refused.value.damaged[0].records_after == 2
    journal = Journal(path, repair=True)
    assert [record["t"] for record in journal.records()] == ["one", "after", "last"]
    assert (tmp_path / f"journal.log.corrupt-{len(first)}").read_bytes() == torn[:30]


def _failing_writes(monkeypatch, path, fail):
    """os.write on ``path`` writes half of what it is given, then raises ENOSPC, while ``fail()``."""
    real_write = os.write

    def write(fd, data):
        if fail() and os.readlink(f"/proc/self/fd/{fd}") == str(path):
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)


def test_a_write_the_disk_refuses_leaves_nothing_and_the_next_one_works(tmp_path, monkeypatch):
    path = tmp_path / "journal.log"
    journal = Journal(path)
    journal.append({"t": "before"})
    full = True
    _failing_writes(monkeypatch, path, lambda: full)
    with pytest.raises(JournalWriteError, match="No space left on device"):
        journal.append({"t": "refused", "pad": "x" * 1000})
    assert path.read_bytes() == dumps({"t": "before"})  # the half written was cut back
    full = False
    journal.append({"t": "after"})
    journal.close()
    assert [record["t"] for record in Journal(path).records()] == ["before", "after"]


def test_a_failed_sync_takes_back_what_it_could_not_confirm_and_fails_the_journal(tmp_path, monkeypatch):
    path = tmp_path / "journal.log"
    journal = Journal(path)
    journal.append({"t": "on disk"})
    journal.append({"t": "written, not synced"}, durable=False)

    def fdatasync(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    with pytest.raises(JournalWriteError, match="Input/output error"):
        journal.append({"t": "unsure"})
    assert path.read_bytes() == dumps({"t": "on disk"}), "cut back to the end of the last good sync"
    monkeypatch.undo()  # a later sync may well succeed: the journal still refuses, until a restart
    with pytest.raises(JournalWriteError, match="restart the cloud"):
        journal.append({"t": "refused"}, durable=False)
    journal.close()
    assert [record["t"] for record in Journal(path).records()] == ["on disk"]


def test_a_retracted_record_is_cut_off_or_voided_and_never_read_back(tmp_path):
    path = tmp_path / "journal.log"
    journal = Journal(path)
    journal.append({"t": "kept"})
    sequence, offset = journal.write_at({"t": "last, retracted"})
    journal.retract(sequence, offset)
    assert path.read_bytes() == dumps({"t": "kept"})
    sequence, offset = journal.write_at({"t": "retracted after another"})
    journal.append({"t": "written meanwhile"})
    journal.retract(sequence, offset)
    journal.close()
    assert [record["t"] for record in Journal(path).records()] == ["kept", "written meanwhile"]
    repaired = Journal(path, repair=True)  # a repair rewrites offsets: voided records go with their void
    assert [record["t"] for record in repaired.records()] == ["kept", "written meanwhile"]


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


def _app(status: str, *, fail: bool = False):
    def app(environ, start_response):
        if fail:
            raise RuntimeError("moto failed")
        start_response(status, [])
        return [b"answer"]

    return app


def _put(body: bytes) -> dict[str, object]:
    return {
        "REQUEST_METHOD": "PUT",
        "PATH_INFO": "/bucket/key",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }


def test_a_change_is_journaled_before_it_is_applied_and_taken_back_when_refused(tmp_path):
    journal = Journal(tmp_path / "journal.log")
    seen: list[int] = []

    def applied(environ, start_response):  # what is on disk when moto applies the change
        seen.append(journal.size())
        start_response("200 OK", [])
        return [b""]

    assert JournalingApp(applied, journal)(_put(b"kept"), lambda *a: None) == [b""]
    assert seen[-1] == journal.size() > 0, "the record was on disk before the change was applied"
    JournalingApp(_app("400 Bad Request"), journal)(_put(b"refused"), lambda *a: None)
    failing = JournalingApp(_app("200 OK", fail=True), journal)
    with pytest.raises(RuntimeError):
        failing(_put(b"failed"), lambda *a: None)
    assert JournalingApp(_app("200 OK"), journal)(_put(b"after"), lambda *a: None) == [b"answer"]
    journal.close()
    assert [record["body"] for record in Journal(tmp_path / "journal.log").records()] == [b"kept", b"after"]
