"""Record a job's model replies once, to replay them on the local cloud (docs/local-cloud.md).

    .venv/bin/python scripts/record_replies.py JOB DIR [--aws | --endpoint URL] [--stack-name NAME] [--json]

Reads the finished job JOB (usually on AWS, with the real Bedrock) through the operator's reader of a job's
records and writes one ``NAME-SHA.recording.json`` per document to DIR: the sha256 of the document's bytes
and, per model call, its purpose (extract or classify), its class and its reply, as the job's journal holds
it. ``docagent local labels DIR`` registers them with a local cloud, whose Bedrock then replays each reply
for the same document instead of answering from a label: the same job runs locally on the real model's
answers, with crashes and redrive, and makes no call to AWS.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from botocore.exceptions import BotoCoreError, ClientError

from docagent.localcloud.bedrock.recordings import recordings_of, write_recordings
from docagent.operations.context import OperatorContext, OperatorError, as_refusal, target_arguments
from docagent.operations.records import JobRecords, check_job_id

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="record_replies.py",
        description=__doc__,
        parents=[target_arguments()],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("job_id", metavar="JOB", help="a finished job")
    parser.add_argument("directory", metavar="DIR", help="where the recordings are written")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        ctx = OperatorContext.from_args(args)
        records = JobRecords(ctx, check_job_id(args.job_id))
        written = write_recordings(args.directory, recordings_of(records.results, records.model_calls))
    except (OperatorError, ClientError, BotoCoreError) as error:
        refusal = as_refusal(error)
        print(json.dumps({"error": str(refusal)}) if args.json else f"error: {refusal}", file=sys.stderr)
        return EXIT_BAD_INPUT
    answer = {"job_id": args.job_id, "recordings": len(written), "files": [str(path) for path in written]}
    print(
        json.dumps(answer, indent=2)
        if args.json
        else f"{len(written)} recordings written to {args.directory}"
    )
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
