"""One local cloud serves many clients: no definition's parse may leak into another's. moto's preprocessor
kept its QueryLanguage scopes in a list shared by every parse (a class attribute): parses running at once
mixed their scopes, and a JSONata parse that failed left its scope behind, so every later ordinary JSONPath
definition was refused with "Unsupported declaration in QueryLanguage=JSONPath block" until a restart.

The parser-level test fails without the fix (docagent/localcloud/stepfunctions/validation.py); through the
API, the
definition checks refuse most half-way failures before the parser sees them, so the API-level test guards
the end-to-end promise (many clients, parses at once, every valid definition accepted)."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

from docagent.localcloud.server import REGION, LocalCloud

ROLE = "arn:aws:iam::123456789012:role/sfn"
JSONPATH = {"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": {"a.$": "$.x"}, "End": True}}}
JSONATA = {
    "QueryLanguage": "JSONata",
    "StartAt": "P",
    "States": {"P": {"Type": "Pass", "Output": "{% $states.input.x %}", "End": True}},
}
# A JSONPath state inside a JSONata machine: AWS refuses it; the parser fails inside the JSONata scope.
DOWNGRADE = {
    "QueryLanguage": "JSONata",
    "StartAt": "P",
    "States": {"P": {"Type": "Pass", "QueryLanguage": "JSONPath", "End": True}},
}


# One JSONata state with a JSONPath field, as TestState takes it: refused by the parser inside its scope.
JSONATA_STATE_WITH_PATH = {"Type": "Pass", "QueryLanguage": "JSONata", "InputPath": "$.x", "End": True}


def test_many_jsonata_and_jsonpath_definitions_in_parallel_never_refuse_a_valid_one(
    cloud: LocalCloud, aws: Any
) -> None:
    local = threading.local()
    test_state_client = boto3.client(
        "stepfunctions", endpoint_url=cloud.endpoint, region_name=REGION, aws_access_key_id="local",
        aws_secret_access_key="local", config=Config(inject_host_prefix=False),
    )  # fmt: skip

    def client() -> Any:  # one client per thread: many clients at once, as on a shared local cloud
        if not hasattr(local, "sfn"):
            local.sfn = aws("stepfunctions")
        return local.sfn

    def create(number: int) -> tuple[str, str | None]:
        kind = ("jsonpath", "jsonata", "invalid")[number % 3]
        try:
            if (
                kind == "invalid"
            ):  # TestState parses what it is given: the parse fails half-way (its answer is
                # another matter: README deviations)
                test_state_client.test_state(
                    definition=json.dumps(JSONATA_STATE_WITH_PATH), roleArn=ROLE, input="{}"
                )
            else:
                definition = json.dumps(JSONPATH if kind == "jsonpath" else JSONATA)
                client().create_state_machine(name=f"parse-{number}", definition=definition, roleArn=ROLE)
        except ClientError as error:
            return kind, error.response["Error"]["Code"]
        return kind, None

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(create, range(90)))

    assert [error for kind, error in outcomes if kind != "invalid"] == [None] * 60, outcomes
    after = aws("stepfunctions").create_state_machine(
        name="parse-after", definition=json.dumps(JSONPATH), roleArn=ROLE
    )
    assert after["stateMachineArn"].endswith(":parse-after")


def test_parses_in_many_threads_at_once_keep_their_own_query_language(cloud: LocalCloud) -> None:
    """The parser itself, as the cloud's request threads call it (the cloud has installed its patches)."""
    texts = [json.dumps(JSONPATH), json.dumps(JSONATA), json.dumps(DOWNGRADE)] * 200

    def parse(text: str) -> str:
        try:
            AmazonStateLanguageParser.parse(text)
        except ValueError as error:
            return str(error).split(" at", 1)[0]
        return "ok"

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(parse, texts))
    assert set(results[0::3]) == {"ok"}, set(results[0::3])
    assert set(results[1::3]) == {"ok"}, set(results[1::3])
    assert set(results[2::3]) == {"Cannot downgrade from JSONata context to a JSONPath context"}
