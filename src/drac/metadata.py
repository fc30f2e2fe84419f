"""Per-document metadata: where it comes from, and the limits every value is held to.

Sources (all untrusted): a sidecar `<file>.metadata.json` beside the document, in the Amazon
Bedrock Knowledge Bases convention `{"metadataAttributes": {"key": value, ...}}` (a value is
a string, number, boolean or list of strings, or Bedrock's typed form
`{"value": {"type": "STRING", "stringValue": "..."}, "includeForEmbedding": false}`);
`key=value` assignments (`drac ingest --meta`, S3 object user metadata); and nothing else.

Every value is checked before it is stored: at most `MAX_KEYS` keys, names of drac's own
fields (`RESERVED_KEYS`) refused, key names of a safe ASCII set, strings of at most
`MAX_VALUE_CHARS`, lists of at most `MAX_LIST_ITEMS` strings, finite numbers only, the sidecar
at most `MAX_SIDECAR_BYTES`. Each refusal is a MetadataError naming the origin and the key.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from drac.errors import MetadataError

MetaValue = str | int | float | bool | list[str]
"""One metadata value: a string, a number, a boolean or a list of strings."""

Metadata = dict[str, MetaValue]

SIDECAR_SUFFIX = ".metadata.json"
"""A document's sidecar is its file name with this appended (Bedrock's convention)."""

MAX_SIDECAR_BYTES = 10 * 1024
MAX_KEYS = 50
"""Bedrock takes at most 50 inline metadata attributes per document (DocumentMetadata)."""
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 2048
"""Bedrock's MetadataAttributeValue: strings of 1 to 2,048 characters."""
MAX_LIST_ITEMS = 10
"""Bedrock's MetadataAttributeValue: a string list holds 1 to 10 items."""

KEY_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
"""Key names: a letter, then letters, digits, `_`, `.` or `-` (safe in a shell, a terminal, a
filter expression and an OpenSearch term); always matched whole (`fullmatch`: `$` would also
match before a final newline)."""

RESERVED_KEYS = frozenset(
    {
        "tenant",
        "all_tenants",
        "document_id",
        "chunk_id",
        "plan_version",
        "text",
        "breadcrumb",
        "element_ids",
        "pages",
        "boxes",
        "source",
        "source_key",
        "source_path",
        "embedding",
        "meta",
        "metadata",
        "status",
        "sha256",
        "owner",
        "live_tenant",
    }
)
"""Names drac's index, records or answers use; compared case-insensitively, and `_`-prefixed
names are refused too. The tenant in particular comes from identity (the workspace's
`--tenant`, the caller's IAM principal), never from metadata."""

_TYPED_FIELDS = {
    "STRING": "stringValue",
    "NUMBER": "numberValue",
    "BOOLEAN": "booleanValue",
    "STRING_LIST": "stringListValue",
}


def sidecar_name(document_name: str) -> str:
    """The file name of a document's metadata sidecar."""
    return document_name + SIDECAR_SUFFIX


def is_sidecar(name: str) -> bool:
    """Whether a file name (or object key) is a metadata sidecar, never a document."""
    return name.lower().endswith(SIDECAR_SUFFIX)


def check_key(key: object, origin: str) -> str:
    """The key if it may be set by a user; MetadataError naming the origin otherwise."""
    if not isinstance(key, str) or not key:
        raise MetadataError(f"{origin}: a metadata key must be a non-empty string")
    shown = json.dumps(key[:MAX_KEY_CHARS])
    if len(key) > MAX_KEY_CHARS:
        raise MetadataError(f"{origin}: key {shown}... is longer than {MAX_KEY_CHARS} characters")
    if key.lower() in RESERVED_KEYS or key.startswith("_"):
        raise MetadataError(
            f"{origin}: key {shown} is reserved (drac's own field; the tenant comes from "
            "identity, never from metadata)"
        )
    if not KEY_PATTERN.fullmatch(key):
        raise MetadataError(
            f"{origin}: key {shown} may hold only letters, digits, '_', '.' and '-', "
            "starting with a letter"
        )
    return key


def check_value(key: str, value: object, origin: str) -> MetaValue:
    """The value if it is a string, finite number, boolean or list of strings within the
    limits; MetadataError naming the origin and key otherwise."""
    where = f"{origin}: key {json.dumps(key)}"
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise MetadataError(f"{where}: a number must be finite")
        if isinstance(value, int) and abs(value) > 2**53:
            raise MetadataError(f"{where}: the number is too large (at most 2^53)")
        return value
    if isinstance(value, str):
        return _checked_string(value, where)
    if isinstance(value, list):
        if not value or len(value) > MAX_LIST_ITEMS:
            raise MetadataError(f"{where}: a list holds 1 to {MAX_LIST_ITEMS} strings")
        if not all(isinstance(item, str) for item in value):
            raise MetadataError(f"{where}: a list may hold only strings")
        return [_checked_string(item, where) for item in value]
    kind = "null" if value is None else type(value).__name__
    raise MetadataError(
        f"{where}: {kind} is not a metadata value (a string, number, boolean or list of strings)"
    )


def _checked_string(value: str, where: str) -> str:
    if not value:
        raise MetadataError(f"{where}: a string must not be empty")
    if len(value) > MAX_VALUE_CHARS:
        raise MetadataError(f"{where}: a string is longer than {MAX_VALUE_CHARS} characters")
    if "\x00" in value:
        raise MetadataError(f"{where}: a string must not hold a NUL character")
    return value


def validated(pairs: Iterable[tuple[object, object]], origin: str) -> Metadata:
    """Check every key and value and the number of keys; a key given twice is refused."""
    metadata: Metadata = {}
    for key, value in pairs:
        name = check_key(key, origin)
        if name in metadata:
            raise MetadataError(f"{origin}: key {json.dumps(name)} is given twice")
        metadata[name] = check_value(name, value, origin)
        if len(metadata) > MAX_KEYS:
            raise MetadataError(f"{origin}: more than {MAX_KEYS} metadata keys")
    return metadata


def parse_sidecar(data: bytes, origin: str) -> Metadata:
    """The metadata of a sidecar file's bytes (Bedrock's `metadataAttributes` object);
    MetadataError naming the origin for anything else."""
    if len(data) > MAX_SIDECAR_BYTES:
        raise MetadataError(
            f"{origin}: {len(data):,} bytes, more than the {MAX_SIDECAR_BYTES // 1024} KiB limit"
        )
    try:
        document = json.loads(
            data.decode("utf-8"), parse_constant=_no_constant, object_pairs_hook=_pairs
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise MetadataError(f"{origin}: not valid UTF-8 JSON ({_first_line(exc)})") from exc
    if not isinstance(document, _Pairs) or not any(k == "metadataAttributes" for k, _ in document):
        raise MetadataError(f'{origin}: expected an object {{"metadataAttributes": {{...}}}}')
    attributes = dict(document)["metadataAttributes"]
    if not isinstance(attributes, _Pairs):
        raise MetadataError(f"{origin}: metadataAttributes must be an object")
    return validated(((k, _untyped(k, v, origin)) for k, v in attributes), origin)


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its key/value pairs in order (so a key given twice is seen)."""


def _pairs(items: list[tuple[str, Any]]) -> _Pairs:
    return _Pairs(items)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _untyped(key: str, value: object, origin: str) -> object:
    """A plain value from Bedrock's typed form `{"value": {"type": T, "<t>Value": v}}`."""
    if isinstance(value, list) and not isinstance(value, _Pairs):
        return [_untyped(key, item, origin) if isinstance(item, _Pairs) else item for item in value]
    if not isinstance(value, _Pairs):
        return value
    fields = dict(value)
    typed = fields.get("value")
    if not isinstance(typed, _Pairs):
        raise MetadataError(
            f"{origin}: key {json.dumps(key)}: an object value must be Bedrock's typed form "
            '{"value": {"type": ..., ...}}'
        )
    spec = dict(typed)
    field = _TYPED_FIELDS.get(str(spec.get("type")))
    if field is None or field not in spec:
        raise MetadataError(
            f"{origin}: key {json.dumps(key)}: type must be one of "
            f"{', '.join(_TYPED_FIELDS)} with its matching value field"
        )
    return spec[field]


def parse_assignment(text: str, origin: str) -> tuple[str, MetaValue]:
    """One `key=value` (a number or `true`/`false` become one, anything else a string) or
    `key:=JSON` (the value as JSON: `year:=2024`, `code:="007"`, `tags:=["a","b"]`)."""
    if ":=" in text and text.find(":=") + 1 == text.find("="):
        key, raw = text.split(":=", 1)
        try:
            value: object = json.loads(raw, parse_constant=_no_constant)
        except ValueError as exc:
            raise MetadataError(
                f"{origin}: {json.dumps(key)}: the value after ':=' is not JSON"
            ) from exc
    elif "=" in text:
        key, raw = text.split("=", 1)
        value = scalar(raw)
    else:
        raise MetadataError(f"{origin}: {json.dumps(text[:80])} is not key=value")
    name = check_key(key.strip(), origin)
    return name, check_value(name, value, origin)


def parse_assignments(texts: Iterable[str], origin: str) -> Metadata:
    """Several `key=value` assignments as metadata (a later one of a key replaces it)."""
    metadata: Metadata = {}
    for text in texts:
        key, value = parse_assignment(text, origin)
        metadata[key] = value
    return validated(metadata.items(), origin)


_NUMBER = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$")


def scalar(text: str) -> str | int | float | bool:
    """A written value as what it reads as: an integer or decimal number, `true`/`false`,
    else the string itself (`007` keeps its zeros: a leading zero is no number)."""
    if text in ("true", "false"):
        return text == "true"
    if _NUMBER.match(text):
        number = float(text)
        if number.is_integer() and "." not in text and "e" not in text.lower():
            return int(text)
        return number
    return text


def merged(*layers: Mapping[str, MetaValue], origin: str = "metadata") -> Metadata:
    """Metadata layers merged, a later layer's key replacing an earlier one's, re-checked
    against the key limit."""
    combined: Metadata = {}
    for layer in layers:
        combined.update(layer)
    return validated(combined.items(), origin)


def as_date(value: object) -> datetime | None:
    """A string value as a UTC date-time when it is an ISO 8601 date or date-time
    (`2024-05-01`, `2024-05-01T12:00:00Z`; no zone means UTC), else None."""
    if not isinstance(value, str) or len(value) < 10 or not value[:4].isdigit():
        return None
    if value[4:5] != "-" or value[7:8] != "-":
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0][:160]
