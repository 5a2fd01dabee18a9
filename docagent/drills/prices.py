"""Public on-demand prices, US East (N. Virginia), dated with the page each comes from (``docagent cost``).

Prices change: check the pages before relying on a figure. Free tiers are ignored (a job's marginal cost).
"""

from __future__ import annotations

from dataclasses import dataclass

PRICES_AS_OF = "2026-11-30"
REGION = "us-east-1"

# Step Functions Standard: $0.025 per 1,000 state transitions (retries included).
# As of 2026-11: https://aws.amazon.com/step-functions/pricing/
STEP_FUNCTIONS_PER_TRANSITION = 0.025 / 1000

# Lambda (x86_64, the stack's architecture): $0.20 per 1M requests, $0.0000166667 per GB-second (first 6
# billion GB-s a month). As of 2026-11: https://aws.amazon.com/lambda/pricing/ and
# https://docs.aws.amazon.com/whitepapers/latest/how-aws-pricing-works/lambda.html
LAMBDA_PER_REQUEST = 0.20 / 1_000_000
LAMBDA_PER_GB_SECOND = 0.0000166667

# DynamoDB on-demand (Standard table class): $0.625 per million write request units, $0.125 per million read
# request units. As of 2026-11: https://aws.amazon.com/dynamodb/pricing/on-demand/ (prices since the
# November 2024 reduction). Items here are under 1 KB: one unit per write, one per (strongly consistent) read.
DYNAMODB_PER_WRITE = 0.625 / 1_000_000
DYNAMODB_PER_READ = 0.125 / 1_000_000

# S3 Standard: PUT, COPY, POST, LIST $0.005 per 1,000; GET, SELECT and other reads $0.0004 per 1,000;
# storage $0.023 per GB-month (first 50 TB). As of 2026-11: https://aws.amazon.com/s3/pricing/
S3_PER_WRITE_OR_LIST = 0.005 / 1000
S3_PER_READ = 0.0004 / 1000
S3_PER_GB_MONTH = 0.023
S3_WRITE_OR_LIST_OPERATIONS = frozenset(
    {
        "PutObject",
        "CopyObject",
        "CreateMultipartUpload",
        "UploadPart",
        "UploadPartCopy",
        "CompleteMultipartUpload",
        "ListObjects",
        "ListObjectsV2",
        "ListObjectVersions",
    }
)
S3_READ_OPERATIONS = frozenset({"GetObject", "HeadObject"})

DYNAMODB_WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"})
DYNAMODB_READ_OPERATIONS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem"})


@dataclass(frozen=True)
class ModelPrice:
    """On-demand price per 1,000 tokens; ``matches`` is a substring of the model or inference profile id."""

    matches: str
    input_per_1000: float
    output_per_1000: float
    source: str


# Bedrock on-demand, per 1,000 tokens. As of 2026-11: https://aws.amazon.com/bedrock/pricing/ (Anthropic);
# Claude 3 Haiku $0.25 / $1.25 per million (also https://inventivehq.com/blog/aws-bedrock-pricing-guide),
# Claude 3.5 Haiku $0.80 / $4.00 per million (https://deploybase.ai/articles/amazon-bedrock-pricing),
# Claude Haiku 4.5 $1 / $5 per million on the global endpoint, regional (us.*) 10% more
# (https://clauder-navi.com/en/bedrock-claude-cost/).
MODEL_PRICES: tuple[ModelPrice, ...] = (
    ModelPrice("claude-3-haiku", 0.00025, 0.00125, "https://aws.amazon.com/bedrock/pricing/"),
    ModelPrice("claude-3-5-haiku", 0.0008, 0.004, "https://aws.amazon.com/bedrock/pricing/"),
    ModelPrice("global.anthropic.claude-haiku-4-5", 0.001, 0.005, "https://aws.amazon.com/bedrock/pricing/"),
    ModelPrice("claude-haiku-4-5", 0.0011, 0.0055, "https://aws.amazon.com/bedrock/pricing/ (regional +10%)"),
)

# Not prices but what a job is assumed to take on AWS, where a local run cannot tell (printed with the cost):
# the output tokens of one extraction (a JSON object of seven short fields), and how long each function runs
# (ProcessDocument: the config's seconds_per_document, dominated by the model call; the others a second).
ASSUMED_OUTPUT_TOKENS_PER_DOCUMENT = 200
ASSUMED_SECONDS_PER_JOB_STEP = 1.0


def model_price(model_id: str) -> ModelPrice:
    """The price of a model id; LookupError naming the known models when there is none."""
    for price in MODEL_PRICES:
        if price.matches in model_id:
            return price
    known = ", ".join(price.matches for price in MODEL_PRICES)
    raise LookupError(f"no price for model {model_id!r} in docagent/drills/prices.py (known: {known})")
