"""A role's least-privilege policy as a table: each statement a ``Grant`` (its Sid, its actions, the name of
the ARNs it covers, and when it applies), resolved against the ARNs one role is built with. The roles of
stacks/lambdas.py and stacks/workflow.py are their tables; what a statement allows is read there, in one
place, instead of in the code that assembles the role."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from aws_cdk import aws_iam as iam

from stacks import nag

T = TypeVar("T")


@dataclass(frozen=True)
class Grant(Generic[T]):
    """One policy statement: ``resources`` names an entry of the role's ARNs (a statement whose ARNs are
    none is left out); ``when``, given what the role is for (a function's spec), says whether it applies."""

    sid: str
    actions: tuple[str, ...]
    resources: str
    when: Callable[[T], bool] | None = None


def granted(
    grants: Iterable[Grant[T]], subject: T, arns: Mapping[str, Sequence[str]]
) -> list[iam.PolicyStatement]:
    """The statements of ``grants`` that apply to ``subject``, in table order."""
    return [
        iam.PolicyStatement(sid=grant.sid, actions=list(grant.actions), resources=list(arns[grant.resources]))
        for grant in grants
        if (grant.when is None or grant.when(subject)) and arns[grant.resources]
    ]


@dataclass(frozen=True)
class Wildcards:
    """A cdk-nag IAM5 acknowledgement: the wildcard ARNs of the ``resources`` entries (only those holding a
    ``*`` when ``only_wildcards``), for ``reason``, formatted with the role's words (``{module}``, ...)."""

    resources: tuple[str, ...]
    reason: str
    only_wildcards: bool = False


def acknowledge(
    role: iam.Role, table: Iterable[Wildcards], arns: Mapping[str, Sequence[str]], **words: object
) -> None:
    for entry in table:
        chosen = [arn for name in entry.resources for arn in arns[name]]
        nag.acknowledge_wildcard_resources(
            role,
            [arn for arn in chosen if "*" in arn] if entry.only_wildcards else chosen,
            entry.reason.format(**words),
        )
