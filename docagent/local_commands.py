"""``docagent local ...``: the local cloud's commands (up, labels, model-faults, down, status, deploy), each
registered next to its function. The process lifecycle itself is docagent/localcloud/lifecycle.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TypeAlias

from rich.console import Console

from docagent import project
from docagent.localcloud.lifecycle import (
    MODEL_FAULTS_HELP,
    LifecycleError,
    UpOptions,
    add_model_arguments,
    restored_line,
)
from docagent.operations.context import EXIT_NOT_FOUND, EXIT_OK, OperatorError, emit
from stacks import outputs as names

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
console = Console(stderr=True, markup=False)  # paths, ids and errors print as written
ENDPOINT_HELP = "the local cloud's endpoint (default: the running one)"


def refusal(error: LifecycleError) -> OperatorError:
    return OperatorError(str(error), error.exit_code, error.error_type)


def model_faults_option(spec: str | None) -> Any:
    """``--model-faults SPEC`` parsed for the local Bedrock (None without it); a bad spec is refused."""
    from docagent.localcloud.bedrock.model_faults import parse_model_faults

    if not spec:
        return None
    try:
        return parse_model_faults(spec)
    except ValueError as error:
        raise OperatorError(str(error)) from None


def _reader(path: str | None) -> Any:
    from docagent.localcloud.bedrock.labels import load_reader

    if not path:
        return None
    try:
        return load_reader(path)
    except ValueError as error:
        raise OperatorError(str(error)) from None


def _endpoint(args: argparse.Namespace) -> str:
    if getattr(args, "endpoint", None):
        return str(args.endpoint)
    record = project.running_cloud()
    if record is None:
        raise OperatorError(project.cloud_down_message(), EXIT_NOT_FOUND, "LocalCloudDown")
    return str(record["endpoint"])


# ---- local up ----


def cmd_local_up(args: argparse.Namespace) -> int:
    from docagent.localcloud import lifecycle
    from docagent.localcloud.bedrock.backends import parse_model
    from docagent.localcloud.request_guard import allowed_origins

    try:  # a bad --model or --allow-origin is refused before anything starts
        parse_model(args.model or "labels")
        allowed_origins(args.allow_origin)
    except ValueError as error:
        raise OperatorError(str(error)) from None
    options = UpOptions(
        port=args.port,
        time_scale=args.time_scale,
        fresh=args.fresh,
        skip_corrupt=args.skip_corrupt,
        model_faults=args.model_faults,
        reader=args.reader,
        deliver_twice=tuple(args.deliver_twice),
        model=args.model,
        record=args.record,
        allow_host=tuple(args.allow_host),
        allow_origin=tuple(args.allow_origin),
        iam=args.iam,
    )
    try:
        time_scale = lifecycle.time_scale_to_start(options)
        if args.detach:
            record, pid = lifecycle.start_detached(options, time_scale)
        else:
            lifecycle.serve(
                options,
                time_scale,
                model_faults=model_faults_option(args.model_faults),
                reader=_reader(args.reader),
                say=console.print,
            )
            return EXIT_OK
    except LifecycleError as error:
        raise refusal(error) from None

    def human() -> None:
        console.print(restored_line(record))
        console.print(f"local cloud up at {record.get('endpoint')} (pid {pid})")

    emit(args, record, human)
    return EXIT_OK


def add_local_up(local: Commands, common: argparse.ArgumentParser) -> None:
    up = local.add_parser("up", parents=[common], help="serve the local cloud on 127.0.0.1")
    up.add_argument("--port", type=int, default=4566)
    up.add_argument(
        "--time-scale",
        type=float,
        help="scale retry intervals, waits and timeouts (default: the last one used here, else 1)",
    )
    up.add_argument(
        "--fresh",
        action="store_true",
        help="forget the kept state (jobs, buckets, tables, tickets) and start empty",
    )
    up.add_argument("--detach", action="store_true", help="run in the background (stop with `local down`)")
    up.add_argument(
        "--skip-corrupt",
        action="store_true",
        help="restore a journal with damaged records in its middle: keep every whole record, set exactly "
        "the damaged bytes aside next to it (without this flag such a journal is refused and named)",
    )
    up.add_argument(
        "--deliver-twice",
        type=int,
        action="append",
        default=[],
        metavar="INDEX",
        help="deliver this item twice to EXPRESS Distributed Map children (AWS runs them at least once)",
    )
    up.add_argument(
        "--no-iam",
        dest="iam",
        action="store_false",
        help="do not authorize the deployed roles' requests against the template's policies (debugging only; "
        'also DOCAGENT_LOCAL_IAM=off; docs/local-cloud.md "IAM")',
    )
    up.add_argument("--model-faults", metavar="SPEC", help=MODEL_FAULTS_HELP)
    add_model_arguments(up)
    up.add_argument(
        "--reader",
        metavar="FILE",
        help="a Python file answering unlabelled documents of one class (examples/invoices/local_reader.py)",
    )
    up.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this Host name (default: 127.0.0.1 and localhost on the port only)",
    )
    up.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let a browser page of this origin (scheme://host[:port]) call the endpoint; default: none "
        "(also DOCAGENT_LOCAL_ALLOW_ORIGINS, comma-separated)",
    )
    up.set_defaults(handler=cmd_local_up)


# ---- local labels ----


def cmd_local_labels(args: argparse.Namespace) -> int:
    from docagent.localcloud.bedrock.labels import LabelsInvalid, post_labels, read_labels, read_recordings

    try:
        labels, recordings = read_labels(args.directory), read_recordings(args.directory)
    except LabelsInvalid as invalid:
        details = {"problems": invalid.problems}
        raise OperatorError(str(invalid), error_type="LabelsInvalid", details=details) from None
    held = post_labels(_endpoint(args), labels, recordings)
    answer = {
        "registered": len(labels) + len(recordings),
        "labels": held["labels"],
        "recordings": held["recordings"],
        "directory": str(args.directory),
    }
    emit(
        args,
        answer,
        lambda: console.print(f"{len(labels)} label(s) registered; the local cloud holds {held['labels']}"),
    )
    return EXIT_OK


def add_local_labels(local: Commands, common: argparse.ArgumentParser) -> None:
    labels = local.add_parser(
        "labels",
        parents=[common],
        help="register a folder's labels (NAME.EXT + NAME.label.json) and recordings (NAME.recording.json) "
        "with the local Bedrock",
    )
    labels.add_argument(
        "directory", metavar="DIR", help="a definition folder (its samples/) or a samples folder"
    )
    labels.add_argument("--endpoint", help=ENDPOINT_HELP)
    labels.set_defaults(handler=cmd_local_labels)


# ---- local secret ----


def cmd_local_secret(args: argparse.Namespace) -> int:
    """Put an action's secret into the local cloud, where the definition names it (``ssm:/NAME`` in SSM
    Parameter Store as a SecureString, a Secrets Manager ARN as that secret): RunActions reads it there as it
    reads it on AWS (functions/actions/credentials.py). The value comes from --value or standard input, so it
    need not be in a shell's history."""
    import boto3

    value = args.value if args.value is not None else sys.stdin.read().rstrip("\n")
    if not value:
        raise OperatorError("no value: pass --value or write it to standard input")
    endpoint = _endpoint(args)
    session = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name="us-east-1"
    )
    if args.name.startswith("ssm:"):
        name = args.name.removeprefix("ssm:")
        session.client("ssm", endpoint_url=endpoint).put_parameter(
            Name=name, Value=value, Type="SecureString", Overwrite=True
        )
    elif args.name.startswith("arn:") and ":secretsmanager:" in args.name:
        client = session.client("secretsmanager", endpoint_url=endpoint)
        name = args.name.split(":secret:", 1)[1]
        try:
            client.put_secret_value(SecretId=name, SecretString=value)
        except client.exceptions.ResourceNotFoundException:
            client.create_secret(Name=name, SecretString=value)
    else:
        raise OperatorError(
            f"{args.name}: name an action's secret as the definition does (ssm:/NAME or a secret ARN)"
        )
    emit(
        args,
        {"secret": args.name, "stored": True},
        lambda: console.print(f"{args.name} stored in the local cloud"),
    )
    return EXIT_OK


def add_local_secret(local: Commands, common: argparse.ArgumentParser) -> None:
    secret = local.add_parser(
        "secret",
        parents=[common],
        help="store an action's secret in the local cloud where the definition names it (ssm:/NAME, an ARN)",
    )
    secret.add_argument(
        "name", metavar="SECRET", help='as the action\'s "secret" names it: ssm:/NAME or a secret ARN'
    )
    secret.add_argument("--value", help="the value (default: read from standard input)")
    secret.add_argument("--endpoint", help=ENDPOINT_HELP)
    secret.set_defaults(handler=cmd_local_secret)


# ---- local model-faults ----


def cmd_local_model_faults(args: argparse.Namespace) -> int:
    from docagent.localcloud.bedrock.model_faults import model_faults_of, set_model_faults

    endpoint = _endpoint(args)
    if args.faults is None:
        answer = model_faults_of(endpoint)
    else:
        answer = set_model_faults(endpoint, model_faults_option(args.faults))
    emit(args, answer, lambda: Console(markup=False).print_json(data=answer))
    return EXIT_OK


def add_local_model_faults(local: Commands, common: argparse.ArgumentParser) -> None:
    faults = local.add_parser(
        "model-faults",
        parents=[common],
        help="show or change the local Bedrock's fault switches while the cloud runs",
    )
    faults.add_argument("faults", nargs="?", metavar="SPEC", help=MODEL_FAULTS_HELP + " ('none' resets)")
    faults.add_argument("--endpoint", help=ENDPOINT_HELP)
    faults.set_defaults(handler=cmd_local_model_faults)


# ---- local down, local status ----


def cmd_local_down(args: argparse.Namespace) -> int:
    from docagent.localcloud import lifecycle

    try:
        record = lifecycle.stop()
    except LifecycleError as error:
        raise refusal(error) from None
    emit(args, {"stopped": record}, lambda: console.print(f"local cloud at {record['endpoint']} stopped"))
    return EXIT_OK


def add_local_down(local: Commands, common: argparse.ArgumentParser) -> None:
    down = local.add_parser("down", parents=[common], help="stop a detached local cloud")
    down.set_defaults(handler=cmd_local_down)


def cmd_local_status(args: argparse.Namespace) -> int:
    from docagent.localcloud import lifecycle

    status = lifecycle.status()
    record = status["cloud"]

    def human() -> None:
        if record:
            console.print(
                f"local cloud up at {record['endpoint']} (pid {record['pid']}, time scale "
                f"{record.get('time_scale')}); at its start: {restored_line(record)}"
            )
        else:
            console.print("local cloud down: start it with `docagent local up --detach`")
        journal, tickets = status["journal_bytes"], status["tickets_bytes"]
        console.print(
            f"state in {project.LOCAL_DIR}: {status['state_bytes'] / 1e6:.1f} MB (journal "
            f"{journal / 1e6:.1f} MB, tickets {tickets / 1e6:.1f} MB); "
            + ("a deployment is recorded" if status["deployed"] else "nothing deployed")
        )

    emit(args, status, human)
    return EXIT_OK


def add_local_status(local: Commands, common: argparse.ArgumentParser) -> None:
    status = local.add_parser(
        "status", parents=[common], help="whether the local cloud is up, where its state lives, how big it is"
    )
    status.set_defaults(handler=cmd_local_status)


# ---- local deploy ----


def cmd_local_deploy(args: argparse.Namespace) -> int:
    from docagent.localcloud.cfn_template import DeployError
    from docagent.localcloud.deploy import deploy
    from docagent.localcloud.synth import synth_local

    endpoint = _endpoint(args)
    out_dir = Path(args.out_dir) if args.out_dir else synth_local()
    try:
        stack = deploy(out_dir, args.stack_name, endpoint)
    except DeployError as error:
        raise OperatorError(str(error), 1) from None
    stack.save(project.LOCAL_STACK_FILE)
    emit(
        args,
        stack.__dict__,
        lambda: console.print(
            f"deployed {len(stack.physical)} resources of {stack.stack_name}; outputs:\n"
            + "\n".join(f"  {name} = {value}" for name, value in stack.outputs.items())
        ),
    )
    return EXIT_OK


def add_local_deploy(local: Commands, common: argparse.ArgumentParser) -> None:
    deploy = local.add_parser(
        "deploy", parents=[common], help="deploy the synthesized app to the local cloud"
    )
    deploy.add_argument(
        "--out-dir", help="a synthesized cloud assembly (default: the app synthesized with the local profile)"
    )
    deploy.add_argument("--stack-name", default=names.STACK_NAME)
    deploy.add_argument("--endpoint", help=ENDPOINT_HELP)
    deploy.set_defaults(handler=cmd_local_deploy)


# The `local` subcommands in the order `docagent local --help` lists them.
LOCAL_COMMANDS = (
    add_local_up,
    add_local_labels,
    add_local_secret,
    add_local_model_faults,
    add_local_down,
    add_local_status,
    add_local_deploy,
)


def register(commands: Commands, common: argparse.ArgumentParser) -> None:
    """``docagent local``: the group, then each subcommand."""
    local = commands.add_parser("local", help="the local cloud").add_subparsers(
        dest="local_command", required=True
    )
    for add in LOCAL_COMMANDS:
        add(local, common)
