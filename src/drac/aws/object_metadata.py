"""A cloud document's metadata: its S3 object's user metadata and tags, and its sidecar object.

Three sources, all untrusted and checked by `drac.metadata`, merged in this order (a later one
wins for a key two name):
1. user metadata of the object version whose name starts with `drac-`
   (`x-amz-meta-drac-department: legal` is `department=legal`; values read as `--meta` values
   do); other user metadata is left alone (tools write their own there);
2. tags of the same object version whose key starts with `drac-` (any case: tag keys keep
   theirs), read with GetObjectTagging (S3 keeps at most 10 tags on an object); values read
   as user metadata values do;
3. the sidecar `<key>.metadata.json` beside the object (the Bedrock Knowledge Bases
   convention), its current version.

Why this order: user metadata is fixed when the version is uploaded, tags can be changed on
it without a new upload, and the sidecar is the explicit, typed (numbers, lists, Bedrock's
typed form) and separately versioned statement of the document's metadata, so the source
that is easier to change on purpose wins.

Register reads the uploaded version's; a sidecar or tags that change later are applied by
`drac.aws.stages.late_metadata`, which reads the key's current version's.
"""

from __future__ import annotations

from typing import Any

from drac.errors import MetadataError
from drac.metadata import (
    MAX_SIDECAR_BYTES,
    Metadata,
    merged,
    parse_sidecar,
    scalar,
    sidecar_name,
    validated,
)

USER_METADATA_PREFIX = "drac-"
TAG_PREFIX = USER_METADATA_PREFIX
"""Tags named `drac-<key>` are metadata; S3 allows 10 tags per object version."""
_MISSING = ("NoSuchKey", "NoSuchVersion", "404", "NotFound")


def document_metadata(s3: Any, bucket: str, key: str, version_id: str | None = None) -> Metadata:
    """The metadata of one object version (the current one when `version_id` is None):
    `drac-` user metadata, its `drac-` tags over them, then its sidecar over both. Raises
    MetadataError naming the object (or sidecar) and the key."""
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
    # the tags of the version whose user metadata was read (HEAD names it when none was given)
    from_tags = object_tags(s3, bucket, key, version_id or head.get("VersionId"))
    from_sidecar = _sidecar(s3, bucket, sidecar_name(key))  # the key with the suffix added
    return merged(from_user, from_tags, from_sidecar, origin=f"s3://{bucket}/{key}")


def current_metadata(s3: Any, bucket: str, key: str) -> Metadata | None:
    """The metadata of the key's current version, or None when the key has none (deleted)."""
    try:
        return document_metadata(s3, bucket, key)
    except s3.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _MISSING:
            return None
        raise


def object_tags(s3: Any, bucket: str, key: str, version_id: str | None = None) -> Metadata:
    """The `drac-` tags of an object version as metadata (GetObjectTagging; with a version id
    it needs s3:GetObjectVersionTagging too). Raises MetadataError naming the object."""
    request: dict[str, Any] = {"Bucket": bucket, "Key": key}
    if version_id:
        request["VersionId"] = version_id
    tags = s3.get_object_tagging(**request).get("TagSet") or []
    pairs = [
        (str(tag["Key"])[len(TAG_PREFIX) :], scalar(str(tag.get("Value", ""))))
        for tag in tags
        if str(tag.get("Key", "")).lower().startswith(TAG_PREFIX)
    ]
    return validated(pairs, f"s3://{bucket}/{key} (drac-* tags)")


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
