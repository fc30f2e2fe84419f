"""S3 adapter of the ArtifactStore port."""

from __future__ import annotations

from typing import Any

from drac.ports import ArtifactStore


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

    def get_bytes(self, key: str, *, version_id: str | None = None) -> bytes:
        """Return the object's bytes (of one version, when given); KeyError when absent."""
        request = {"Bucket": self.bucket, "Key": self.prefix + key}
        if version_id:
            request["VersionId"] = version_id
        try:
            response = self.client.get_object(**request)
        except self.client.exceptions.NoSuchKey as exc:
            raise KeyError(key) from exc
        return response["Body"].read()

    def exists(self, key: str) -> bool:
        """Return True when an object is stored under key."""
        try:
            self.client.head_object(Bucket=self.bucket, Key=self.prefix + key)
        except self.client.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise
        return True
