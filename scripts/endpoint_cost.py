"""The local cloud's CPU per request for a document's most frequent calls (printed only).

    .venv/bin/python scripts/endpoint_cost.py [--rounds 300] [--calls] [--json]

Starts a local cloud in this process (its journal on, in a temporary folder) and a client process that makes
``--rounds`` times what a document's steps ask most: PutObject, GetObject twice, ListObjectsV2, a conditional
PutItem, UpdateItem, GetItem (seven requests a round, as the idempotent steps send them). Prints the CPU
seconds this process spent while the client ran (its serving threads, the journal; not the client's), per
request, and ``--calls``: the Python function calls the serving threads made per request (cProfile's count,
which does not depend on the machine's load, unlike the CPU). docs/performance.md "The endpoint per request".
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import resource
import socketserver
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from docagent.localcloud.server import LocalCloud, client_environment

REQUESTS_PER_ROUND = 7
CLIENT = r"""
import json, sys
import boto3
rounds = int(sys.argv[1])
s3, dynamodb = boto3.client("s3"), boto3.client("dynamodb")
s3.create_bucket(Bucket="documents")
dynamodb.create_table(TableName="steps", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
body = json.dumps({"text": "y" * 2000}).encode()
print("ready", flush=True)
sys.stdin.readline()
for i in range(rounds):
    key = f"jobs/job/documents/{i}.json"
    s3.put_object(Bucket="documents", Key=key, Body=body, ContentType="application/json")
    for _ in range(2):
        s3.get_object(Bucket="documents", Key=key)["Body"].read()
    s3.list_objects_v2(Bucket="documents", Prefix=f"jobs/job/documents/{i}")
    dynamodb.put_item(TableName="steps", Item={"id": {"S": str(i)}, "status": {"S": "INPROGRESS"}},
        ConditionExpression="attribute_not_exists(id)")
    dynamodb.update_item(TableName="steps", Key={"id": {"S": str(i)}},
        UpdateExpression="SET #s = :s, #d = :d",
        ExpressionAttributeNames={"#s": "status", "#d": "data"},
        ExpressionAttributeValues={":s": {"S": "COMPLETED"}, ":d": {"S": "{}"}})
    dynamodb.get_item(TableName="steps", Key={"id": {"S": str(i)}}, ConsistentRead=True)
print("done", flush=True)
"""


class _Profiled:
    """A cProfile per serving thread (socketserver's ``process_request_thread``), merged at the end."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._original: Any = socketserver.ThreadingMixIn.process_request_thread

    def __enter__(self) -> _Profiled:
        original, profiles = self._original, self.profiles

        def profiled(server: Any, request: Any, client_address: Any) -> None:
            profile = cProfile.Profile()
            profiles.append(profile)
            profile.runcall(original, server, request, client_address)

        socketserver.ThreadingMixIn.process_request_thread = profiled  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *_: Any) -> None:
        socketserver.ThreadingMixIn.process_request_thread = self._original  # type: ignore[method-assign]

    def calls(self) -> int:
        merged = pstats.Stats(self.profiles[0])
        for profile in self.profiles[1:]:
            merged.add(profile)
        return int(merged.total_calls)  # type: ignore[attr-defined]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(rounds: int, count_calls: bool) -> dict[str, Any]:
    profiled = _Profiled()
    with tempfile.TemporaryDirectory() as folder, profiled if count_calls else contextlib.nullcontext():
        cloud = LocalCloud(Path(folder), fresh=True).start()
        try:
            environment = {**os.environ, **client_environment(cloud.endpoint)}
            client = subprocess.Popen(
                [sys.executable, "-c", CLIENT, str(rounds)],
                env=environment,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert client.stdin is not None and client.stdout is not None
            if client.stdout.readline().strip() != "ready":
                raise SystemExit("the client could not set up its bucket and table")
            started = _cpu()
            client.stdin.write("go\n")
            client.stdin.flush()
            if client.stdout.readline().strip() != "done":
                raise SystemExit("the client failed")
            spent = _cpu() - started
            client.wait()
        finally:
            cloud.stop()
        requests = rounds * REQUESTS_PER_ROUND
        figures: dict[str, Any] = {
            "requests": requests,
            "cpu_seconds": round(spent, 3),
            "cpu_ms_per_request": round(spent * 1000 / requests, 3),
        }
        if count_calls:  # the setup's requests too (a few, and the first request's imports of each service)
            figures["python_calls_per_request"] = round(profiled.calls() / requests)
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--calls", action="store_true", help="count the serving threads' Python calls")
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    figures = measure(arguments.rounds, arguments.calls)
    if arguments.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name}: {value}")


if __name__ == "__main__":
    main()
