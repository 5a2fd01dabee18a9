"""S3 objects read and written as streams, in bounded memory: the report's fan-in (docs/design.md, "Report
by fan-in") never holds a whole result file or table.

- ``iter_json_values``: the values of a JSON array object (the ResultWriter's result files, up to 5 GB each)
  or of a JSON Lines object, one at a time, reading the body in chunks (looked up 2026-12-04, AWS docs
  "ResultWriter (Map)", https://docs.aws.amazon.com/step-functions/latest/dg/input-output-resultwriter.html:
  the result files are a JSON array unless WriterConfig's OutputType says JSONL; either reads here);
- ``MultipartWriter``: bytes appended to one object, sent in parts of ``PART_BYTES`` (a multipart upload; a
  single PutObject when the whole object is smaller);
- ``join_objects``: objects concatenated into one, server-side (UploadPartCopy) where S3 allows it.

S3's multipart limits (as of 2026-12-04, AWS docs "Amazon S3 multipart upload limits",
https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html): parts of 5 MiB to 5 GiB, the last any
size, at most 10,000 parts, an object at most 5 TiB (48.8 TiB since 2025-12: either way far above a table).
Keys come from functions/storage.py.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from functions import aws, s3_json

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

MIN_PART_BYTES = 5 * 1024 * 1024  # S3's smallest part but the last
PART_BYTES = 8 * 1024 * 1024  # what a writer buffers before it sends a part
READ_CHUNK_BYTES = 1024 * 1024
_DECODER = json.JSONDecoder()
_SKIPPED = " \t\r\n,"


def _chunks(key: str, bucket: str | None) -> Iterator[str]:
    body = aws.s3_client().get_object(Bucket=s3_json.bucket_name(bucket), Key=key)["Body"]
    decoder = codecs.getincrementaldecoder("utf-8")()  # a chunk may end inside a character
    for chunk in body.iter_chunks(READ_CHUNK_BYTES):
        yield decoder.decode(chunk)
    yield decoder.decode(b"", final=True)


def iter_json_values(key: str, *, bucket: str | None = None) -> Iterator[Any]:
    """Each value of a JSON array (``[v, v, ...]``) or of JSON Lines, in order, holding at most one value
    and one chunk. A value that is not JSON raises ValueError (json.JSONDecodeError)."""
    buffer = ""
    started = False
    for text in _chunks(key, bucket):
        buffer += text
        position = 0
        while True:
            while position < len(buffer) and buffer[position] in _SKIPPED:
                position += 1
            if not started and position < len(buffer):
                started = True
                if buffer[position] == "[":
                    position += 1
                    continue
            if position >= len(buffer) or buffer[position] == "]":
                break
            try:
                value, end = _DECODER.raw_decode(buffer, position)
            except json.JSONDecodeError:
                break  # the value goes on in the next chunk
            if end == len(buffer) and isinstance(value, (int, float)):
                break  # a number cut by the chunk's end
            yield value
            position = end
        buffer = buffer[position:]
    rest = buffer.strip(_SKIPPED + "]")
    if rest:
        value, _ = _DECODER.raw_decode(rest)
        yield value


class MultipartWriter:
    """Bytes appended to ``key``, uploaded in parts of PART_BYTES; ``close`` completes the object (a single
    PutObject when it never reached a part), an exception inside ``with`` aborts the upload. Holds at most
    one part. ``size``: the bytes written so far."""

    def __init__(self, key: str, *, content_type: str, bucket: str | None = None) -> None:
        self.key, self.content_type, self.bucket = key, content_type, s3_json.bucket_name(bucket)
        self.size = 0
        self._buffer = bytearray()
        self._upload_id: str | None = None
        self._parts: list[CompletedPartTypeDef] = []

    def write(self, data: bytes) -> None:
        self._buffer += data
        self.size += len(data)
        if len(self._buffer) >= PART_BYTES:
            self._send(bytes(self._buffer))
            self._buffer.clear()

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def copy_part(self, source_key: str, size: int) -> None:
        """A whole object as the next part, copied server-side: only when nothing is buffered and the
        object is at least MIN_PART_BYTES (the caller checks its size)."""
        assert not self._buffer, "copy_part after buffered bytes would reorder them"
        copied = aws.s3_client().upload_part_copy(
            Bucket=self.bucket,
            Key=self.key,
            UploadId=self._upload(),
            PartNumber=len(self._parts) + 1,
            CopySource={"Bucket": self.bucket, "Key": source_key},
        )
        self._parts.append({"PartNumber": len(self._parts) + 1, "ETag": copied["CopyPartResult"]["ETag"]})
        self.size += size

    def _upload(self) -> str:
        if self._upload_id is None:
            created = aws.s3_client().create_multipart_upload(
                Bucket=self.bucket, Key=self.key, ContentType=self.content_type
            )
            self._upload_id = created["UploadId"]
        return self._upload_id

    def _send(self, data: bytes) -> None:
        number = len(self._parts) + 1
        sent = aws.s3_client().upload_part(
            Bucket=self.bucket, Key=self.key, UploadId=self._upload(), PartNumber=number, Body=data
        )
        self._parts.append({"PartNumber": number, "ETag": sent["ETag"]})

    def close(self) -> None:
        if self._upload_id is None:
            aws.s3_client().put_object(
                Bucket=self.bucket, Key=self.key, Body=bytes(self._buffer), ContentType=self.content_type
            )
            return
        if self._buffer:
            self._send(bytes(self._buffer))
            self._buffer.clear()
        aws.s3_client().complete_multipart_upload(
            Bucket=self.bucket, Key=self.key, UploadId=self._upload_id, MultipartUpload={"Parts": self._parts}
        )

    def abort(self) -> None:
        if self._upload_id is not None:
            aws.s3_client().abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self._upload_id)

    def __enter__(self) -> MultipartWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if error is None:
            self.close()
        else:
            self.abort()


def join_objects(key: str, sources: list[tuple[str, int]], *, content_type: str) -> int:
    """The sources (key, size), in order, as one object ``key``: a source of at least MIN_PART_BYTES met
    with nothing buffered is copied server-side, the others pass through the writer's buffer. Returns the
    joined size."""
    s3 = aws.s3_client()
    bucket = s3_json.bucket_name()
    with MultipartWriter(key, content_type=content_type) as writer:
        for source, size in sources:
            if size >= MIN_PART_BYTES and not writer.buffered:
                writer.copy_part(source, size)
                continue
            body = s3.get_object(Bucket=bucket, Key=source)["Body"]
            for chunk in body.iter_chunks(PART_BYTES):
                writer.write(chunk)
        return writer.size
