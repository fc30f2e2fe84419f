"""A cloud document's metadata: its S3 object's user metadata and its sidecar object.

Two sources, both untrusted and checked by `drac.metadata`:
- user metadata of the uploaded object version whose name starts with `drac-`
  (`x-amz-meta-drac-department: legal` is `department=legal`; values read as `--meta` values
  do); other user metadata is left alone (tools write their own there);
- the sidecar `<key>.metadata.json` beside the object (the Bedrock Knowledge Bases
  convention), its current version, read when the document is registered. The sidecar wins
  over user metadata for a key both name.

The starter never ingests a sidecar as a document; a sidecar uploaded after its document is
not read until the document is uploaded again with new content (docs/aws.md says so).
"""

from __future__ import annotations

from typing import Any

from drac.metadata import (
    MAX_SIDECAR_BYTES,
    Metadata,
    MetadataError,
    merged,
    parse_sidecar,
    scalar,
    sidecar_name,
    validated,
)

USER_METADATA_PREFIX = "drac-"
_MISSING = ("NoSuchKey", "NoSuchVersion", "404", "NotFound")


def document_metadata(s3: Any, bucket: str, key: str, version_id: str | None = None) -> Metadata:
    """The metadata of one uploaded object version: `drac-` user metadata, then its sidecar
    over it. Raises MetadataError naming the object (or sidecar) and the key."""
    request: dict[str, Any] = {"Bucket": bucket, "Key": key}
    if version_id:
        request["VersionId"] = version_id
    head = s3.head_object(**request)
    user = {
        name.removeprefix(USER_METADATA_PREFIX): scalar(value)
        for name, value in (head.get("Metadata") or {}).items()
        if name.lower().startswith(USER_METADATA_PREFIX)
    }
    from_user = validated(user.items(), f"s3://{bucket}/{key} (x-amz-meta-drac-*)")
    from_sidecar = _sidecar(s3, bucket, sidecar_name(key))  # the key with the suffix added
    return merged(from_user, from_sidecar, origin=f"s3://{bucket}/{key}")


MAX_KEY_BYTES = 1024
"""S3's longest object key: a document key within 14 bytes of it can have no sidecar."""


def _sidecar(s3: Any, bucket: str, key: str) -> Metadata:
    origin = f"s3://{bucket}/{key}"
    if len(key.encode("utf-8")) > MAX_KEY_BYTES:
        return {}
    try:
        head = s3.head_object(Bucket=bucket, Key=key)
    except s3.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _MISSING:
            return {}
        raise
    size = int(head.get("ContentLength", 0))
    if size > MAX_SIDECAR_BYTES:
        raise MetadataError(
            f"{origin}: {size:,} bytes, more than the {MAX_SIDECAR_BYTES // 1024} KiB limit"
        )
    request: dict[str, Any] = {
        "Bucket": bucket,
        "Key": key,
        "Range": f"bytes=0-{MAX_SIDECAR_BYTES}",
    }
    if head.get("VersionId"):
        request["VersionId"] = head["VersionId"]  # the version whose size was checked
    data = s3.get_object(**request)["Body"].read(MAX_SIDECAR_BYTES + 1)
    return parse_sidecar(data, origin)
