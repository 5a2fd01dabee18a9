"""What every operator command needs: the stack's outputs and AWS clients, for a local cloud or for AWS.

Local: ``--endpoint URL`` (or the running local cloud, ``docagent local up``) with the outputs that
``docagent local deploy`` saved in ``.docagent/local/stack.json``. A local cloud that is down, with state
kept on disk, is an error that says how to start it. AWS (``--aws``, or no local state at all): the
default credentials and the outputs of the CloudFormation stack (``--stack-name``, default
DocAgent).
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.text import Text

from docagent import project
from docagent.localcloud.request_counts import OPERATOR_USER_AGENT
from docagent.operations.sessions import aws_session, new_session
from functions import s3_json
from stacks import outputs as names

# docagent.localcloud.server.REGION, not imported: that would load moto for every operator command.
LOCAL_REGION = "us-east-1"

EXIT_OK, EXIT_JOB_FAILED, EXIT_BAD_REQUEST, EXIT_NOT_FOUND = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # Ctrl-C while following a job (128 + SIGINT, as shells report it); the job runs on
DEFAULT_STACK_NAME = names.STACK_NAME

# markup=False: what the operator's commands print holds user text (job ids, file names, --by, reasons, AWS
# error messages) that must print as written, never as rich markup (colours are styles, not markup).
console = Console(stderr=True, markup=False)


class OperatorError(Exception):
    """A refusal: its message, exit code (2: bad request, 3: not found), a name and details for --json."""

    def __init__(
        self,
        message: str,
        exit_code: int = EXIT_BAD_REQUEST,
        error_type: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.error_type = error_type or ("NotFound" if exit_code == EXIT_NOT_FOUND else "BadRequest")
        self.details = details or {}


class RefusedError(OperatorError):
    """A refusal named first, as the operator commands raise it."""

    def __init__(
        self,
        error_type: str,
        message: str,
        exit_code: int = EXIT_BAD_REQUEST,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, exit_code, error_type, details)


def as_refusal(error: Exception) -> OperatorError:
    """An AWS error a command did not expect (access denied, throttling, an endpoint that does not
    answer) is a refusal too (exit 2, or 3 for a missing resource), not a traceback."""
    if isinstance(error, OperatorError):
        return error
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code") or "ClientError"
        message = error.response.get("Error", {}).get("Message", str(error))
        missing = "NotFound" in code or "DoesNotExist" in code or code == "NoSuchBucket"
        return RefusedError(code, f"{code}: {message}", EXIT_NOT_FOUND if missing else EXIT_BAD_REQUEST)
    return RefusedError("AwsUnreachable", f"cannot reach the deployment: {error}")


def command(run: Callable[[Any], int]) -> Callable[[Any], int]:
    """Run a command; a refusal prints ``{"error", "error_type", "exit_code", ...details}`` with --json."""

    @functools.wraps(run)
    def wrapped(args: Any) -> int:
        try:
            return run(args)
        except (OperatorError, ClientError, BotoCoreError) as error:
            refusal = as_refusal(error)
        payload = {
            "error": str(refusal),
            "error_type": refusal.error_type,
            "exit_code": refusal.exit_code,
            **refusal.details,
        }
        if getattr(args, "json", False):
            print(json.dumps(payload, indent=2, default=str))
        else:
            # soft_wrap: a command in the message (how to resume, how to follow) stays one line to copy
            console.print(Text.assemble(("error:", "red"), f" {refusal}"), soft_wrap=True)
        return refusal.exit_code

    return wrapped


def emit(args: argparse.Namespace, payload: dict[str, Any], human: Callable[[], None]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, default=str))
    else:
        human()


def target_arguments() -> argparse.ArgumentParser:
    """A parent parser with the options that pick the deployment: --endpoint, --aws, --stack-name."""
    parser = argparse.ArgumentParser(add_help=False)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--endpoint", help="a local cloud's endpoint (default: the running local cloud)")
    where.add_argument("--aws", action="store_true", help="use AWS even when a local cloud is running")
    where.add_argument(
        "--local", action="store_true", help="use the running local cloud (the default when one runs)"
    )
    parser.add_argument(
        "--stack-name", default=DEFAULT_STACK_NAME, help="the deployed stack (default DocAgent)"
    )
    return parser


@dataclass
class OperatorContext:
    """Clients and stack outputs of one deployment (``endpoint`` is None for AWS)."""

    endpoint: str | None
    stack_name: str
    outputs: dict[str, str]
    session: boto3.session.Session = field(repr=False)
    _clients: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> OperatorContext:
        if getattr(args, "local", False) and project.running_cloud() is None:
            raise OperatorError(project.cloud_down_message(), EXIT_NOT_FOUND, "LocalCloudDown")
        return cls.resolve(
            getattr(args, "endpoint", None),
            stack_name=getattr(args, "stack_name", DEFAULT_STACK_NAME),
            use_aws=getattr(args, "aws", False),
        )

    @classmethod
    def resolve(
        cls, endpoint: str | None, *, stack_name: str = DEFAULT_STACK_NAME, use_aws: bool = False
    ) -> OperatorContext:
        if endpoint is None and not use_aws:
            running = project.running_cloud()
            if running is None and project.local_state_exists():
                # A local cloud that is down is not a reason to talk to AWS: only --aws (or no local
                # state at all) goes there.
                raise OperatorError(project.cloud_down_message(), EXIT_NOT_FOUND, "LocalCloudDown")
            endpoint = str(running["endpoint"]) if running else None
        if endpoint is not None:
            return cls.local(endpoint, stack_name=stack_name)
        return cls.aws(stack_name=stack_name)

    @classmethod
    def local(cls, endpoint: str, *, stack_name: str = DEFAULT_STACK_NAME) -> OperatorContext:
        stack_file = project.LOCAL_STACK_FILE
        if not stack_file.exists():
            raise OperatorError(
                f"no local deployment recorded ({stack_file}): run `docagent local deploy` first",
                EXIT_NOT_FOUND,
            )
        stack = json.loads(stack_file.read_text())  # a LocalStack record
        if stack.get("stack_name") != stack_name:
            raise OperatorError(
                f"{stack_file} records stack {stack.get('stack_name')!r}, not {stack_name!r}", EXIT_NOT_FOUND
            )
        recorded = {str(name): str(value) for name, value in stack.get("outputs", {}).items()}
        return cls.of_local_stack(endpoint, stack_name, recorded)

    @classmethod
    def of_local_stack(cls, endpoint: str, stack_name: str, stack_outputs: dict[str, str]) -> OperatorContext:
        """A local cloud's deployment known from its outputs (the drills deploy their own stacks)."""
        session = new_session(
            aws_access_key_id="local", aws_secret_access_key="local", region_name=LOCAL_REGION
        )
        return cls(endpoint=endpoint, stack_name=stack_name, outputs=dict(stack_outputs), session=session)

    @classmethod
    def aws(cls, *, stack_name: str = DEFAULT_STACK_NAME) -> OperatorContext:
        session = aws_session()
        try:
            described = session.client("cloudformation").describe_stacks(StackName=stack_name)
        except ClientError as error:
            message = error.response.get("Error", {}).get("Message", str(error))
            raise OperatorError(f"stack {stack_name} not found on AWS: {message}", EXIT_NOT_FOUND) from None
        except BotoCoreError as error:
            raise OperatorError(f"cannot reach AWS: {error}") from None
        (stack,) = described["Stacks"]
        found = {output["OutputKey"]: output["OutputValue"] for output in stack.get("Outputs", [])}
        return cls(endpoint=None, stack_name=stack_name, outputs=found, session=session)

    def client(self, service: str) -> Any:
        if service not in self._clients:
            # Marked as the operator's: a local cloud does not count them as the job's (docagent cost).
            self._clients[service] = self.session.client(  # type: ignore[call-overload]
                service, endpoint_url=self.endpoint, config=Config(user_agent_extra=OPERATOR_USER_AGENT)
            )
        return self._clients[service]

    def output(self, name: str) -> str:
        try:
            return self.outputs[name]
        except KeyError:
            raise OperatorError(f"stack {self.stack_name} has no output {name}", EXIT_NOT_FOUND) from None

    @property
    def bucket(self) -> str:
        return self.output(names.BUCKET)

    @property
    def state_machine_arn(self) -> str:
        return self.output(names.STATE_MACHINE)

    @property
    def where(self) -> str:
        return self.endpoint or f"AWS ({self.session.region_name})"

    def read_json(self, key: str, *, bucket: str | None = None) -> Any:
        """The parsed object in the job bucket (or ``bucket``), or None when it does not exist."""
        return s3_json.get_json_or_none(key, bucket=bucket or self.bucket, client=self.client("s3"))

    def write_json(self, key: str, data: Any) -> None:
        s3_json.put_json(key, data, bucket=self.bucket, client=self.client("s3"))
