"""S3 adapter of the ArtifactStore port."""

from __future__ import annotations

from typing import Any, BinaryIO

from drac.aws.errors import ObjectTooLarge
from drac.ports import ArtifactStore

CHUNK_BYTES = 1024 * 1024
"""What a streamed download holds at a time."""


class S3ArtifactStore(ArtifactStore):
    """Artifacts as objects of one bucket (keys as given, optionally under a prefix)."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        """Wrap an S3 client for one bucket."""
        self.client = client
        self.bucket = bucket
        self.prefix = prefix

    def put_bytes(self, key: str, data: bytes) -> None:
        """Store bytes under key (S3 PUT replaces atomically)."""
        self.client.put_object(Bucket=self.bucket, Key=self.prefix + key, Body=data)

    def _get_object(self, key: str, version_id: str | None) -> dict[str, Any]:
        """GetObject's response for the key (of one version, when given); KeyError when absent."""
        request = {"Bucket": self.bucket, "Key": self.prefix + key}
        if version_id:
            request["VersionId"] = version_id
        try:
            response: dict[str, Any] = self.client.get_object(**request)
        except self.client.exceptions.NoSuchKey as exc:
            raise KeyError(key) from exc
        return response

    def get_bytes(self, key: str, *, version_id: str | None = None) -> bytes:
        """Return the object's bytes (of one version, when given); KeyError when absent."""
        return self._get_object(key, version_id)["Body"].read()

    def download(
        self, key: str, out: BinaryIO, *, version_id: str | None = None, max_bytes: int
    ) -> int:
        """Stream the object (of one version, when given) into `out` a chunk at a time, never
        holding it whole; its size. KeyError when absent; ObjectTooLarge when the object is over
        `max_bytes` (checked before a byte is written)."""
        response = self._get_object(key, version_id)
        body = response["Body"]
        try:
            size = int(response["ContentLength"])
            if size > max_bytes:
                raise ObjectTooLarge(key, size, max_bytes)
            for chunk in body.iter_chunks(CHUNK_BYTES):
                out.write(chunk)
        finally:
            body.close()
        return size

    def exists(self, key: str) -> bool:
        """Return True when an object is stored under key."""
        try:
            self.client.head_object(Bucket=self.bucket, Key=self.prefix + key)
        except self.client.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise
        return True
