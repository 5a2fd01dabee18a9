"""``docagent definition validate|publish|list|show``: a job definition checked, published as a version
without a deploy, and read back (docs/defining-a-job.md, "Validate" and "Publish, versions and pinning")."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import TypeAdapter
from rich.console import Console

from docagent import project
from docagent.kit import registry
from docagent.kit.calibration_file import calibration_notes
from docagent.kit.grounding_notes import grounding_notes
from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.kit.validate import validate
from docagent.operations.context import (
    EXIT_BAD_REQUEST,
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorContext,
    OperatorError,
    RefusedError,
    emit,
    target_arguments,
)
from docagent.operations.kit_shapes import (
    DefinitionListOutput,
    DefinitionPublishOutput,
    DefinitionRow,
    DefinitionShowOutput,
    DefinitionValidateOutput,
)
from functions import storage
from functions.actions.allowed import AllowedTargets
from functions.definition.job_spec import DEFINITION_FILE, DefinitionBundle
from functions.settings import Settings
from stacks import outputs as names

# The variable that carries the deployment's allow-list to the functions (functions/settings.py).
ACTIONS_ALLOWED_ENV = str(Settings.model_fields["actions_allowed"].alias)
# ... and the models they may call.
MODELS_ALLOWED_ENV = str(Settings.model_fields["models_allowed"].alias)
_MODEL_IDS = TypeAdapter(list[str])

console = Console(markup=False, soft_wrap=True)


@dataclass(frozen=True)
class Reachable:
    """What a reachable deployment allows (None: not known), and whether each was checked (validate's
    ``actions_checked`` and ``models_checked``)."""

    actions: AllowedTargets | None
    actions_checked: str
    models: list[str] | None
    models_checked: str


def _reachable_deployment(args: argparse.Namespace) -> Reachable:
    """The deployment's allow-list of action targets and the models its functions may call, when a deployment
    is reachable (the running local cloud, ``--endpoint``, or ``--aws``), so validate refuses what publish and
    start would; else None and why. AWS is asked only when named: validate alone never waits on a network."""
    named = getattr(args, "endpoint", None) or getattr(args, "aws", False)
    if not named and project.running_cloud() is None:
        why = "not checked: no deployment named (--aws, --endpoint) and no local cloud running"
        return Reachable(None, f"actions {why}", None, f"models {why}")
    try:
        context = OperatorContext.from_args(args)
        allowed, models = deployed_allow_list(context), deployed_models(context)
    except (OperatorError, ClientError, BotoCoreError, OSError) as error:
        return Reachable(
            None,
            f"actions not checked against a deployment ({error})",
            None,
            f"models not checked against a deployment ({error})",
        )
    unsaid = f"not checked: the deployment at {context.where} does not say what they may"
    return Reachable(
        allowed,
        f"actions {unsaid} reach"
        if allowed is None
        else f"actions checked against the deployment at {context.where}",
        models,
        f"models {unsaid} call"
        if models is None
        else f"models checked against the deployment at {context.where} (it allows {', '.join(models)})",
    )


def cmd_validate(args: argparse.Namespace) -> int:
    folder = Path(args.path)
    reachable = _reachable_deployment(args)
    problems = validate(folder, reachable.actions, reachable.models)
    name, sha, notes = None, None, []
    if not problems:
        bundle = read_bundle(folder)
        name, sha = bundle.name, bundle.sha256
        notes = grounding_notes(bundle) + calibration_notes(folder, bundle)
    output = DefinitionValidateOutput(
        folder=str(folder),
        name=name,
        ok=not problems,
        sha256=sha,
        problems=problems,
        actions_checked=reachable.actions_checked,
        models_checked=reachable.models_checked,
        notes=notes,
    )

    def human() -> None:
        for line in [*(problem.line() for problem in problems), *notes]:
            console.print(line)
        if problems:
            console.print(
                f"{folder}: {len(problems)} problem(s); nothing can be published until they are fixed"
            )
        else:
            console.print(
                f"{folder}: valid ({registry.label(str(name), str(sha))}); {reachable.actions_checked}; "
                f"{reachable.models_checked}"
            )

    emit(args, output.model_dump(mode="json"), human)
    return EXIT_BAD_REQUEST if problems else EXIT_OK


def deployed_allow_list(context: OperatorContext) -> AllowedTargets | None:
    """What the deployed RunActions may reach (its ACTIONS_ALLOWED), so a definition whose actions it would
    refuse is not published; None when the function cannot be read (the check then happens at run time)."""
    try:
        configuration = context.client("lambda").get_function_configuration(
            FunctionName=context.output(names.function_name_output(names.RUN_ACTIONS))
        )
    except (ClientError, OperatorError):
        return None
    raw = ((configuration.get("Environment") or {}).get("Variables") or {}).get(ACTIONS_ALLOWED_ENV)
    return AllowedTargets.model_validate_json(raw) if raw else None


def deployed_models(context: OperatorContext) -> list[str] | None:
    """The models the deployed ProcessDocument may call (its MODELS_ALLOWED: cdk.json's ``model_id`` and
    ``extra_model_ids``), so a definition naming another (job.json ``models``) is not published; None when the
    function cannot be read or predates the variable (the check then happens at run time, or Bedrock's)."""
    try:
        configuration = context.client("lambda").get_function_configuration(
            FunctionName=context.output(names.function_name_output(names.PROCESS_DOCUMENT))
        )
    except (ClientError, OperatorError):
        return None
    raw = ((configuration.get("Environment") or {}).get("Variables") or {}).get(MODELS_ALLOWED_ENV)
    return _MODEL_IDS.validate_json(raw) if raw else None


def checked_folder(context: OperatorContext, folder: str | Path) -> DefinitionBundle:
    """A definition folder validated against the deployment; an invalid one is refused with every problem
    (DefinitionInvalid)."""
    try:
        return registry.checked_bundle(folder, deployed_allow_list(context), deployed_models(context))
    except DefinitionInvalid as error:
        raise RefusedError(
            "DefinitionInvalid",
            f"{error}\nfix them (`docagent definition validate {folder}`), then publish",
            details={"problems": error.problems},
        ) from None


def publish_folder(context: OperatorContext, folder: str | Path) -> registry.Published:
    """Validate, then publish; an invalid folder is refused with every problem (DefinitionInvalid)."""
    return registry.publish(context.client("s3"), context.bucket, checked_folder(context, folder))


def publish_output(published: registry.Published) -> DefinitionPublishOutput:
    name, sha = published.bundle.name, published.pointer.sha256
    return DefinitionPublishOutput(
        name=name,
        sha256=sha,
        version=registry.label(name, sha),
        written=published.written,
        moved=published.moved,
        key=storage.definition_key(name, sha),
        current_key=storage.definition_current_key(name),
        published_at=published.pointer.published_at,
        previous=list(published.pointer.previous),
    )


def publish_line(output: DefinitionPublishOutput) -> str:
    if not output.moved:
        return f"{output.version} is already the current version of {output.name}: nothing to publish"
    again = "" if output.written else " (that version was published before; its bundle is unchanged)"
    return f"published {output.version}: new jobs of {output.name} pin it{again}"


def cmd_publish(args: argparse.Namespace) -> int:
    context = OperatorContext.from_args(args)
    output = publish_output(publish_folder(context, args.path))
    emit(args, output.model_dump(mode="json"), lambda: console.print(publish_line(output)))
    return EXIT_OK


@dataclass(frozen=True)
class StartDefinition:
    """The definition a start names (--definition, or --job once published): its current version."""

    name: str
    version: str
    note: str = ""


def start_definition(
    ctx: OperatorContext, args: argparse.Namespace, *, new_job: bool
) -> StartDefinition | None:
    """--job PATH is published first (validated: an invalid folder starts nothing; with --dry-run validated
    only); --definition NAME must be published. PrepareJob pins the version current when it runs (a start
    that is no new job changes none)."""
    if getattr(args, "job", None) and getattr(args, "dry_run", False):
        bundle = checked_folder(ctx, args.job)
        label = registry.label(bundle.definition.name, bundle.sha256)
        return StartDefinition(bundle.definition.name, label, " (validated; --dry-run: not published)")
    if getattr(args, "job", None):
        published = publish_output(publish_folder(ctx, args.job))
        return StartDefinition(published.name, published.version, f" ({publish_line(published)})")
    name = getattr(args, "definition", None)
    if not name:
        return None
    pointer = registry.get_pointer(ctx.client("s3"), ctx.bucket, name)
    if pointer is None:
        if not new_job:
            return StartDefinition(name, name)
        raise RefusedError(
            "DefinitionNotPublished",
            f"definition {name!r} is not published at {ctx.where}: `docagent definition publish PATH` "
            f"(or `docagent start --job PATH`), then start the job",
            EXIT_NOT_FOUND,
        )
    return StartDefinition(name, registry.label(name, pointer.sha256))


def cmd_list(args: argparse.Namespace) -> int:
    context = OperatorContext.from_args(args)
    s3, bucket = context.client("s3"), context.bucket
    rows = []
    for name in registry.names(s3, bucket):
        pointer = registry.get_pointer(s3, bucket, name)
        if pointer is not None:
            rows.append(
                DefinitionRow(
                    name=name,
                    sha256=pointer.sha256,
                    version=registry.label(name, pointer.sha256),
                    published_at=pointer.published_at,
                    published_by=pointer.published_by,
                    earlier_versions=len(pointer.previous),
                )
            )
    output = DefinitionListOutput(count=len(rows), definitions=rows)

    def human() -> None:
        if not rows:
            console.print(f"no definition published at {context.where}: `docagent definition publish PATH`")
        for row in rows:
            console.print(f"{row.version}  published {row.published_at} by {row.published_by or '?'}")

    emit(args, output.model_dump(mode="json"), human)
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    context = OperatorContext.from_args(args)
    s3, bucket = context.client("s3"), context.bucket
    pointer = registry.get_pointer(s3, bucket, args.name)
    if pointer is None:
        raise OperatorError(
            f"no definition {args.name!r} is published: `docagent definition publish PATH`", EXIT_NOT_FOUND
        )
    sha = pointer.sha256
    if args.version:
        known = [pointer.sha256, *pointer.previous]
        matches = [version for version in known if version.startswith(args.version)]
        sha = matches[0] if len(matches) == 1 else args.version
    bundle = registry.get_bundle(s3, bucket, args.name, sha)
    if bundle is None:
        raise OperatorError(f"{args.name} has no published version {args.version}", EXIT_NOT_FOUND)
    current = sha == pointer.sha256
    output = DefinitionShowOutput(
        name=bundle.name,
        sha256=sha,
        version=registry.label(bundle.name, sha),
        current=current,
        published_at=pointer.published_at if current else None,
        published_by=pointer.published_by if current else None,
        previous=list(pointer.previous),
        classes=sorted(bundle.classes),
        actions=[action.name for action in bundle.definition.actions],
        definition=bundle.definition.model_dump(mode="json", by_alias=True, exclude_defaults=True),
    )

    def human() -> None:
        state = "current" if current else "not current"
        description = bundle.definition.description
        console.print(f"{output.version} ({state})" + (f": {description}" if description else ""))
        console.print(f"  classes: {', '.join(output.classes)}")
        console.print(f"  actions: {', '.join(output.actions) or 'none'}")
        console.print(f"  earlier versions: {len(output.previous)}")

    emit(args, output.model_dump(mode="json"), human)
    return EXIT_OK


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    target = target_arguments()
    definition = commands.add_parser(
        "definition", help="job definitions: validate, publish (no deploy), list, show"
    ).add_subparsers(dest="definition_command", required=True)
    check = definition.add_parser(
        "validate",
        parents=[common, target],
        help=f"every problem of a definition folder ({DEFINITION_FILE} and files)",
    )
    check.add_argument("path", help="the definition's folder")
    check.set_defaults(handler=cmd_validate)
    publish = definition.add_parser(
        "publish", parents=[common, target], help="validate, then publish a new version (new jobs pin it)"
    )
    publish.add_argument("path", help="the definition's folder")
    publish.set_defaults(handler=cmd_publish)
    listing = definition.add_parser("list", parents=[common, target], help="the published definitions")
    listing.set_defaults(handler=cmd_list)
    show = definition.add_parser("show", parents=[common, target], help="a published definition")
    show.add_argument("name")
    show.add_argument("--version", help="a version (sha256 or its prefix); default: the current one")
    show.set_defaults(handler=cmd_show)
