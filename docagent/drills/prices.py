"""Public on-demand prices, US East (N. Virginia), dated with the page each comes from (``docagent cost``).

Prices change: check the pages before relying on a figure. Free tiers are ignored (a job's marginal cost).
"""

from __future__ import annotations

from functions import spend

PRICES_AS_OF = spend.PRICES_AS_OF
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


# The model's prices: the one dated table of functions/spend.py (the budget and the actual cost use it too).
ModelPrice = spend.ModelPrice
MODEL_PRICES = spend.MODEL_PRICES
model_price = spend.model_price

# Not prices but what a job is assumed to take on AWS, where a local run cannot tell (printed with the cost):
# the output tokens of one extraction (a JSON object of seven short fields), and how long each function runs
# (ProcessDocument: the config's seconds_per_document, dominated by the model call; the others a second).
ASSUMED_OUTPUT_TOKENS_PER_DOCUMENT = 200
ASSUMED_SECONDS_PER_JOB_STEP = 1.0
