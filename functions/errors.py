"""Errors. The class name of an exception raised by a handler becomes the Step Functions error name (L2),
so these names are part of the contract in docs/design.md: never rename them (hence no "Error" suffix)."""

# ruff: noqa: N818

from __future__ import annotations


class DocAgentError(Exception):
    """Base class of every error docagent raises on purpose."""


class ConfigurationError(DocAgentError):
    """The function's environment variables are missing or invalid."""


class InvalidJobRequest(DocAgentError):
    """The job request (or an internal event) is malformed or refers to something that does not exist."""


class JobConflict(DocAgentError):
    """The job id already ran with a different request."""


class NoDocuments(DocAgentError):
    """The request selects no documents."""


class JobVerificationFailed(DocAgentError):
    """One or more independent end-of-job checks failed; the message names them."""


class ActionError(DocAgentError):
    """A job-level action's target refused the request (a 4xx other than 409/429, or a misconfigured
    action). Recorded in jobs/{job}/actions/{name}/attempt.json; not retried by the workflow."""


class ActionNotAllowed(ActionError):
    """The action names a target the deployment does not allow (an http host or destination, an event bus,
    an SNS topic, a secret): the deployment's ``actions`` configuration lists what may be reached."""


class ActionTargetUnavailable(ActionError):
    """The action's target could not be reached or kept answering 429/503 past the client's own retries.
    Nothing was done by this attempt: safe to retry (the workflow does)."""


class ActionOutcomeUnknown(ActionError):
    """The request may or may not have been acted on (connection dropped or timed out after sending, a 5xx
    that is not 503), and reconciliation could not settle it yet. The next attempt reconciles (http: by
    reference) or re-sends with the same idempotency key before anything else, so a retry or a redrive never
    performs the action twice."""


class ActionInvalidResponse(ActionError):
    """The target answered something unexpected (not JSON, no id or reference, another reference). Not
    retried by the workflow: fix the target, then redrive."""


class ActionConflict(ActionError):
    """The http target already holds a record for this idempotency key with a different body (HTTP 409)."""


class ApprovalRejected(DocAgentError):
    """The operator rejected the job: ``docagent reject`` sends it with SendTaskFailure.

    No function raises it, except RecordApproval for a token completed with success but a rejection."""


class ApprovalNotForThisJob(DocAgentError):
    """RecordApproval got a decision naming another job or execution: a token completed from another job's
    approval record. The workflow catches it and asks for approval again (docs/design.md, "Approval")."""


class ModelError(DocAgentError):
    """A model call that did not finish (no reply to journal as a completed call).

    ``call_made`` is False when no request was sent (not enough time left): nothing to journal."""

    call_made = True


class ModelThrottled(ModelError):
    """Bedrock refused the call for quota (ThrottlingException, ServiceQuotaExceededException: HTTP 429).
    Nothing was produced; ProcessDocument retries it with exponential backoff and full jitter for about 47
    minutes on average (at least 30: throttling is the normal state of a big job; docs/design.md)."""


class ModelUnavailable(ModelError):
    """A transient Bedrock failure: ServiceUnavailableException, ModelTimeoutException,
    ModelNotReadyException, InternalServerException, ModelErrorException, a 5xx, a read timeout or a
    dropped connection. Retried like ModelThrottled."""


class DocumentInProgress(DocAgentError):
    """The worker handed a long document back unfinished: it made progress (a page window's call at least)
    and the next window would not fit in the time this invocation has left. Nothing is lost: the finished
    windows are durable steps. ProcessDocument retries it at once (a fresh invocation continues at the first
    unfinished window) a bounded number of times; past them the document is rejected with this error and
    the reason, never the job (docs/design.md, "Page windows")."""


class ModelCallRefused(ModelError):
    """A permanent refusal: every document would get the same answer, so the job stops fast. The first
    one opens the job's model breaker (jobs/{job}/model-breaker.json); later documents fail without
    calling the model. The message says the fix. Subclasses name the cause."""


class ModelAccessDenied(ModelCallRefused):
    """AccessDeniedException: model access is not granted for this account and region, or the function's role
    may not invoke the model (or inference profile)."""


class ModelNotAvailable(ModelCallRefused):
    """ResourceNotFoundException, or a ValidationException about the model id: the model (or inference
    profile) does not exist in this region, is past its end of life, or needs an inference profile id."""


class ModelRequestInvalid(ModelCallRefused):
    """Any other ValidationException or 4xx: about the request itself (max tokens, temperature, the prompt),
    or a message docagent does not recognise (the safe default: it opens the breaker; docs/design.md)."""


class InjectedFault(DocAgentError):
    """Raised by a fault point in mode ``raise`` (fault injection, tests and demos only)."""


class DocumentRejected(DocAgentError):
    """A per-document problem. Never raised out of a handler: it is stored in the document's result.

    The subclass name is the rejection error name stored in ``DocumentResult.error``.
    """

    @property
    def error_name(self) -> str:
        return type(self).__name__

    @property
    def reason(self) -> str:
        return str(self)


class DocumentTooLarge(DocumentRejected):
    """The document is larger than MAX_DOCUMENT_BYTES, its block kind's Converse limit, a call's PDF bytes (a
    page window), the job's max_pages, or an image limit; the reason names the figure."""


class DocumentEmpty(DocumentRejected):
    """The document has no content (or only whitespace)."""


class DocumentNotUtf8(DocumentRejected):
    """The document is text (no known binary format) but not valid UTF-8."""


class DocumentFormatUnsupported(DocumentRejected):
    """The document's content (not its name) is a format the Converse API does not take: an image, an archive,
    an executable, another office format. The reason names the format found."""


class DocumentUnreadable(DocumentRejected):
    """The document is in a supported format but cannot be read: a corrupt or encrypted PDF, a PDF with no
    pages, a zip bomb, a broken DOCX. Raised before the call (the zip checks) or from the model's
    ValidationException about the document (Bedrock refuses to parse it); the reason says which."""


class DocumentNotLabelled(DocumentUnreadable):
    """Local only: the local cloud's model answers from labels, and this document has none (a sample whose
    ``NAME.label.json`` was forgotten). Nothing is wrong with the document; the reason says which file to add
    (docs/local-cloud.md). A real model never answers so."""


class DocumentTooLong(DocumentRejected):
    """The document holds more text than the model's context window takes: Bedrock's ValidationException about
    the input's length ("Input is too long for requested model."). Only this document would ever get it, and
    a redrive would get it again: the document's rejection, not the job's failure (docs/design.md)."""


# The fix of a model the deployment does not allow (ModelNotAllowed; `docagent definition validate`).
MODEL_NOT_ALLOWED_FIX = "add it to cdk.json's extra_model_ids and deploy"


class ModelNotAllowed(DocumentRejected):
    """The job's definition names a model (job.json ``models``) the deployment does not let its functions call
    (MODELS_ALLOWED: its ``model_id`` and ``extra_model_ids``): refused before any call, instead of Bedrock's
    AccessDenied later. The reason names the model and the fix (docs/defining-a-job.md,
    "Cheaper model first")."""


class DocumentChanged(DocumentRejected):
    """The document's sha256 differs from the one recorded in the manifest."""


class DocumentMissing(DocumentRejected):
    """The document's object does not exist."""


class ExtractionFailed(DocumentRejected):
    """The model's output was not valid JSON or did not match the class's schema (or the classification's
    reply shape).

    Carries the usage of the call that produced the bad output, so the journal records what it cost.
    """

    def __init__(
        self,
        message: str,
        *,
        model_id: str = "",
        input_tokens: int = 0,
        output_tokens: int = 0,
        tokens_clamped: str | None = None,
    ):
        super().__init__(message)
        self.model_id = model_id
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.tokens_clamped = tokens_clamped


class ModelReplyInvalid(ExtractionFailed):
    """The model's endpoint answered, but not what its protocol says: a body that is not JSON (an HTML page,
    binary), JSON that is not an object (``[1,2,3]``), fields of the wrong type (``usage.inputTokens:
    "lots"``), no output message, or more bytes than a reply of the request's maxTokens can hold. A finished
    call: the document is rejected with the reason, and no attempt is made again (the same request would get
    the same answer); its tokens are those the answer gives, within what the request allowed (docs/design.md,
    "Model calls")."""


class BudgetExceeded(DocAgentError):
    """The job's budget (``max_cost_usd``) would be passed by the document's next model call, so the call was
    not made: the document's Map child fails and the job stops (docs/design.md, "Budget"). The message gives
    the spent and reserved amounts and the budget. ``docagent budget JOB --max-usd N`` raises it and
    ``docagent redrive JOB`` continues: the documents done are not called again."""


class BudgetBusy(DocAgentError):
    """The document's next model call does not fit in the budget's headroom now, but would if the calls in
    flight (reserved at their input estimate and output maximum) cost less than reserved, as they usually
    do. Nothing was called; ProcessDocument retries it like ModelThrottled, and the call either fits once they
    settle or, when the spent amount alone leaves no room, fails with BudgetExceeded."""


class BatchJobsInFlight(DocAgentError):
    """Bedrock refused a part's batch job with ServiceQuotaExceededException ("The number of requests exceeds
    the service quota. Resubmit your request later.", Bedrock API Reference, CreateModelInvocationJob, looked
    up 2026-12-04): the account's batch jobs submitted or in progress on the model are at their quota, other
    workloads' included. Nothing was created. SubmitBatchJob retries it for hours (a batch job ends within
    its 24 h timeout), then the part goes on-demand (docs/batch.md, "Crashes")."""


class BatchUnavailable(DocAgentError):
    """The job's batch path cannot be used: no batch role is configured, Bedrock refused the batch job (a 4xx:
    nothing was created), or there is no batch job record to wait for. The workflow catches it and the
    documents go on-demand. Any other failure of SubmitBatchJob or WaitForBatchJob (a killed or hung worker, a
    5xx after which the job may exist) is not caught: it fails the job, and a redrive continues with the same
    batch job (docs/batch.md, "Crashes")."""
