"""How the workflow retries ``IdempotencyAlreadyInProgressError``: it polls (docs/design.md, "Durable steps").

A step whose invocation died leaves an INPROGRESS record that Powertools expires at the invocation's deadline:
``save_inprogress`` sets ``in_progress_expiry_timestamp`` to now + ``get_remaining_time_in_millis()`` of the
registered Lambda context (looked up 2026-12-02 in aws-powertools/powertools-lambda-python,
``aws_lambda_powertools/utilities/idempotency/persistence/base.py``; the pinned 3.37.0 does the same), so the
record is free at most ``function_timeout_seconds`` after the dead invocation started. Until then every
attempt meets ``IdempotencyAlreadyInProgressError``.

Rather than one long interval (the record may expire any time before the deadline, and a fixed interval
lands after it), the retrier polls: a short IntervalSeconds, BackoffRate 1, and enough MaxAttempts to
outlast the record plus a margin for clock skew between invocations, once for every crash the state's crash
retrier lets the state retry (each retried crash can leave a record of its own, and Step Functions counts
each retrier's attempts across the state's whole run). A retry then lands within one interval of the
record's expiry.
"""

from __future__ import annotations

from dataclasses import dataclass

# Seconds between polls, at least; on AWS every poll is one Lambda invocation (it fails fast: the step meets
# the record before doing anything) and one state transition.
MIN_POLL_SECONDS = 2
# At most this many polls per record: a longer function timeout polls less often.
MAX_POLLS_PER_RECORD = 64
# Clock skew between the invocation that wrote the record and the one that reads it (both compare the
# record's expiry with their own wall clock), and the time a poll takes to reach the record.
MARGIN_SECONDS = 5
# The most crashes a state's crash retrier (Lambda.Unknown, Sandbox.Timedout, Runtime.ExitError) retries:
# RunActions' 4 is the largest in statemachines/document_review.asl.json
# (tests/infra/test_in_progress_polling.py checks every state against it).
CRASH_RETRIES_COVERED = 4


@dataclass(frozen=True)
class InProgressPolling:
    """The IdempotencyAlreadyInProgressError retrier's IntervalSeconds and MaxAttempts (BackoffRate 1)."""

    interval_seconds: int
    max_attempts: int

    @property
    def seconds_covered(self) -> int:
        """How long the polls last in all (the retrier waits this long before it gives up)."""
        return self.interval_seconds * self.max_attempts


def record_lifetime_seconds(function_timeout_seconds: int) -> int:
    """The longest an INPROGRESS record of a dead invocation holds, from the first retry's point of view."""
    return function_timeout_seconds + MARGIN_SECONDS


def in_progress_polling(function_timeout_seconds: int) -> InProgressPolling:
    """The polling that outlasts ``CRASH_RETRIES_COVERED`` records of a function with this timeout."""
    lifetime = record_lifetime_seconds(function_timeout_seconds)
    interval = max(MIN_POLL_SECONDS, -(-lifetime // MAX_POLLS_PER_RECORD))
    polls_per_record = -(-lifetime // interval)
    return InProgressPolling(interval_seconds=interval, max_attempts=polls_per_record * CRASH_RETRIES_COVERED)
