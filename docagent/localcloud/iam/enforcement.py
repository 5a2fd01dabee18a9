"""IAM enforced by the local endpoint: every request made with a deployed role's credentials is authorized
against that role's policies (and the bucket's or topic's policy) before moto serves it.

Who is who: a role deployed from a template (cfn_resources.py tags it ``docagent:iam``) has its own key,
derived from its ARN and carried in the session token (credentials.py). The local Lambda runtime gives each
function its role's credentials (``role_credentials``, the session named after the function, as Lambda does);
the Step Functions interpreter calls S3, Lambda and the other integrations with the execution role's. Any
other session (the operator's, roles created by hand) is not evaluated: it stands for the account's
administrator, as the deploying user does on AWS. A denied request is answered as the service
answers it, in AWS's wording (naming the principal, the action and the resource):

    User: arn:aws:sts::123456789012:assumed-role/ROLE/SESSION is not authorized to perform: s3:GetObject on
    resource: "arn:aws:s3:::bucket/key" because no identity-based policy allows the s3:GetObject action

Decisions are kept per (role, action, resource, condition values) until a policy changes (a write to IAM, a
bucket policy or a topic's attributes): a job's thousands of requests evaluate a few dozen distinct ones.
``DOCAGENT_LOCAL_IAM=off`` (or ``docagent local up --no-iam``) turns enforcement off for debugging.
"""

from __future__ import annotations

import collections
import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

from moto.iam.access_control import PermissionResult
from moto.iam.models import iam_backends
from moto.s3.models import FakeBucket, s3_backends
from moto.sns.models import sns_backends

from docagent.localcloud.iam import actions
from docagent.localcloud.iam.actions import Check, UnmappedRequestError, Where
from docagent.localcloud.iam.policy import Decision, Policy, Principal, UnsupportedConditionError, evaluate
from docagent.localcloud.iam.role_tokens import role_key, role_session
from docagent.localcloud.state.persistence import read_body

SWITCH = "DOCAGENT_LOCAL_IAM"
ENFORCED_TAG = "docagent:iam"
_CREDENTIAL = re.compile(r"Credential=[^/,\s]+/\d{8}/([^/]+)/([^/]+)/aws4_request")
_JSON_PROTOCOL = {"dynamodb", "states", "logs", "ssm", "events", "secretsmanager", "xray", "kms"}
_QUERY_PROTOCOL = {"sns", "sts", "iam", "sqs", "cloudwatch"}

DECISIONS_KEPT = 100_000  # decisions remembered (then forgotten together, and made again as needed)
DENIALS_KEPT = 100  # the latest denials an Authorizer keeps (``denials``, newest last)
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _bucket_policy_left_to_enforcement(self: FakeBucket, action: str, resource: str) -> PermissionResult:
    """moto's S3 applies a bucket policy itself, taking a condition not met as a deny (the template's TLS-only
    Deny, ``aws:SecureTransport`` false, then refused every object request); ``Authorizer`` evaluates it."""
    return PermissionResult.NEUTRAL


def install() -> None:
    FakeBucket.get_permission = _bucket_policy_left_to_enforcement  # type: ignore[method-assign]


def enabled(asked: bool | None = None) -> bool:
    """``asked`` when given, else on unless ``DOCAGENT_LOCAL_IAM`` is ``off`` (``0``, ``false``, ``no``)."""
    if asked is not None:
        return asked
    return os.environ.get(SWITCH, "on").strip().lower() not in ("off", "0", "false", "no")


@dataclass(frozen=True)
class _Role:
    arn: str
    name: str
    policies: tuple[Policy, ...]


def _documents(role: Any) -> Iterable[tuple[str, Any]]:
    yield from (role.policies or {}).items()
    for arn, managed in (role.managed_policies or {}).items():
        version = next((v for v in managed.versions if v.is_default), None)
        if version is not None:
            yield arn, version.document


def _parsed(document: Any) -> Any:
    if isinstance(document, bytes):
        document = document.decode()
    if isinstance(document, str):
        document = json.loads(document if document.lstrip().startswith("{") else unquote(document))
    return document


@dataclass(frozen=True)
class Denial:
    service: str
    message: str

    def respond(self, start_response: Callable[..., Any]) -> list[bytes]:
        """The service's own error shape: S3's XML, the JSON protocol's ``__type``, the REST services'
        ``x-amzn-ErrorType``, the query services' ErrorResponse."""
        text = self.message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if self.service == "s3":
            body = f"<Error><Code>AccessDenied</Code><Message>{text}</Message></Error>"
            return _answer(start_response, "403 Forbidden", "application/xml", body)
        if self.service in _QUERY_PROTOCOL:
            code = "AuthorizationError" if self.service == "sns" else "AccessDenied"
            body = (
                f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code><Message>{text}</Message></Error>"
                "<RequestId>local</RequestId></ErrorResponse>"
            )
            return _answer(start_response, "403 Forbidden", "text/xml", body)
        payload = json.dumps({"__type": "AccessDeniedException", "message": self.message})
        if self.service in _JSON_PROTOCOL:
            return _answer(start_response, "400 Bad Request", "application/x-amz-json-1.0", payload)
        return _answer(start_response, "403 Forbidden", "application/json", payload, "AccessDeniedException")


def _answer(
    start_response: Callable[..., Any], status: str, content_type: str, body: str, error_type: str = ""
) -> list[bytes]:
    data = body.encode()
    headers = [("Content-Type", content_type), ("Content-Length", str(len(data)))]
    if error_type:
        headers.append(("x-amzn-ErrorType", error_type))
    start_response(status, headers)
    return [data]


def denial_message(principal: str, action: str, resource: str, why: str, service: str) -> str:
    """AWS's wording of an access denied (an implicit deny, or an explicit one in an identity- or a
    resource-based policy); S3 quotes the resource."""
    shown = f'"{resource}"' if service == "s3" else resource
    reason = {
        "implicit": f"because no identity-based policy allows the {action} action",
        "identity": "with an explicit deny in an identity-based policy",
        "resource": "with an explicit deny in a resource-based policy",
    }.get(why, why)
    return f"User: {principal} is not authorized to perform: {action} on resource: {shown} {reason}"


class Authorizer:
    """The local endpoint's IAM: ``wrap`` puts it in front of the served application."""

    def __init__(self, account: str, region: str) -> None:
        self.where = Where(account, region)
        self._lock = threading.Lock()
        self._roles: dict[str, _Role] | None = None  # by role key (credentials.py)
        self._resource_policies: dict[str, tuple[Policy, ...]] = {}
        self._decisions: dict[tuple[Any, ...], str | None] = {}
        self.denials: collections.deque[str] = collections.deque(maxlen=DENIALS_KEPT)

    def invalidate(self) -> None:
        with self._lock:
            self._roles = None
            self._resource_policies = {}
            self._decisions = {}

    def _known_roles(self) -> dict[str, _Role]:
        roles = self._roles
        if roles is None:
            backend = iam_backends[self.where.account]["aws"]
            roles = {}
            for role in list(backend.roles.values()):
                if not any(tag.get("Key") == ENFORCED_TAG for tag in role.tags or []):
                    continue
                policies = tuple(Policy.parse(name, _parsed(doc)) for name, doc in _documents(role))
                roles[role_key(role.arn)] = _Role(role.arn, role.name, policies)
            self._roles = roles
        return roles

    def _resource_policy(self, resource: str) -> tuple[Policy, ...]:
        """The bucket policy of an S3 resource, the topic policy of an SNS topic; none for others."""
        if resource.startswith("arn:aws:s3:::"):
            owner = resource.split("/", 1)[0]
        elif resource.startswith("arn:aws:sns:"):
            owner = resource
        else:
            return ()
        if owner not in self._resource_policies:
            document: Any = None
            if owner.startswith("arn:aws:s3:::"):
                bucket = s3_backends[self.where.account]["aws"].buckets.get(owner[len("arn:aws:s3:::") :])
                document = bucket.policy if bucket is not None else None
            else:
                topic = sns_backends[self.where.account][self.where.region].topics.get(owner)
                document = topic.policy if topic is not None else None
            self._resource_policies[owner] = (Policy.parse(owner, _parsed(document)),) if document else ()
        return self._resource_policies[owner]

    def decide(self, role: _Role, principal: Principal, check: Check, region: str) -> str | None:
        """None when ``check`` is allowed, else why not (``implicit``, ``identity``, ``resource`` or a
        sentence)."""
        key = (role.arn, check, region)
        decisions = self._decisions  # one made while a policy changes goes with the old ones (invalidate)
        if key in decisions:
            return decisions[key]
        context = {
            "aws:securetransport": ("true",),  # the loopback endpoint stands for AWS's TLS endpoints
            "aws:requestedregion": (region,),
            "aws:principalarn": (role.arn,),
            "aws:principalaccount": (self.where.account,),
            **{name.lower(): values for name, values in check.context},
        }
        try:
            identity = evaluate(role.policies, check.action, check.resource, context)
            resource = evaluate(
                self._resource_policy(check.resource), check.action, check.resource, context, principal
            )
        except UnsupportedConditionError as error:
            why: str | None = f"because {error}"
        else:
            if identity is Decision.DENY:
                why = "identity"
            elif resource is Decision.DENY:
                why = "resource"
            else:
                why = None if Decision.ALLOW in (identity, resource) else "implicit"
        if len(decisions) >= DECISIONS_KEPT:  # each object is a resource of its own: memory stays bounded
            decisions.clear()
        decisions[key] = why
        return why

    def check(self, environ: dict[str, Any]) -> Denial | None:
        """A denial of the request, or None (allowed, or not made with a deployed role's session)."""
        query = str(environ.get("QUERY_STRING", ""))
        token = environ.get("HTTP_X_AMZ_SECURITY_TOKEN")
        if token is None and "X-Amz-Security-Token=" in query:  # a presigned URL
            token = parse_qs(query).get("X-Amz-Security-Token", [""])[0]
        named = role_session(str(token or ""))
        role = self._known_roles().get(named[0]) if named is not None else None
        credential = _CREDENTIAL.search(str(environ.get("HTTP_AUTHORIZATION") or "") or unquote(query))
        if role is None or named is None or credential is None:
            return None
        session, (region, service) = named[1], credential.groups()
        principal = Principal(
            f"arn:aws:sts::{self.where.account}:assumed-role/{role.name}/{session}",
            role.arn,
            self.where.account,
        )
        try:
            checks = self._checks(environ, service)
        except UnmappedRequestError as error:
            return self._denied(
                service,
                f"User: {principal.arn} is not authorized: the local cloud cannot name the IAM "
                f"action of this request ({error})",
            )
        for check in checks:
            why = self.decide(role, principal, check, region)
            if why is not None:
                message = denial_message(principal.arn, check.action, check.resource, why, service)
                return self._denied(service, message)
        return None

    def authorize(self, role_arn: str, session: str, check: Check) -> str | None:
        """The denial of an action the local cloud takes itself as ``role_arn`` (a Distributed Map starting
        its children), or None."""
        role = self._known_roles().get(role_key(role_arn))
        if role is None:
            return None
        arn = f"arn:aws:sts::{self.where.account}:assumed-role/{role.name}/{session}"
        why = self.decide(role, Principal(arn, role.arn, self.where.account), check, self.where.region)
        if why is None:
            return None
        message = denial_message(arn, check.action, check.resource, why, check.action.split(":", 1)[0])
        self.denials.append(message)
        return message

    def _denied(self, service: str, message: str) -> Denial:
        self.denials.append(message)
        return Denial(service, message)

    def _checks(self, environ: dict[str, Any], service: str) -> list[Check]:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        path = str(environ.get("PATH_INFO", "/"))
        query = str(environ.get("QUERY_STRING", ""))
        target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
        if service == "sts":
            return []  # GetCallerIdentity needs no permission; no other STS call reaches the local cloud
        if service == "s3":
            copy = environ.get("HTTP_X_AMZ_COPY_SOURCE")
            body = read_body(environ) if method == "POST" and "delete" in query else b""
            headers = {"x-amz-copy-source": str(copy)} if copy else {}
            return actions.s3_checks(method, path, query, headers, body)
        if target:
            return actions.json_checks(service, target, read_body(environ), self.where)
        if service == "lambda":
            return actions.lambda_checks(method, path, query, self.where)
        if service == "bedrock":
            body = read_body(environ) if method == "POST" and not path.startswith("/model/") else b""
            return actions.bedrock_checks(method, path, body, self.where)
        if service in _QUERY_PROTOCOL:
            return actions.query_checks(service, read_body(environ), query)
        raise UnmappedRequestError(f"{service} {method} {path}")

    def wrap(self, app: WsgiApp) -> WsgiApp:
        def authorized(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            denial = self.check(environ)
            if denial is not None:
                return denial.respond(start_response)
            try:
                return app(environ, start_response)
            finally:
                if _may_change_policies(environ):
                    self.invalidate()

        return authorized


class _Active:
    authorizer: Authorizer | None = None


def activate(authorizer: Authorizer | None) -> None:
    """The authorizer of the running local cloud (None: IAM not enforced)."""
    _Active.authorizer = authorizer


def active() -> Authorizer | None:
    return _Active.authorizer


def _may_change_policies(environ: dict[str, Any]) -> bool:
    """A write to IAM, to a bucket's policy or to SNS (a topic's policy is one of its attributes)."""
    if str(environ.get("REQUEST_METHOD", "GET")).upper() in ("GET", "HEAD"):
        return False
    credential = _CREDENTIAL.search(str(environ.get("HTTP_AUTHORIZATION") or ""))
    service = credential.group(2) if credential else ""
    return service in ("iam", "sns") or (service == "s3" and "policy" in str(environ.get("QUERY_STRING", "")))
