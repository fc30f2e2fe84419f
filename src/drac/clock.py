"""Wall-clock timestamps in one format everywhere."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    """Current UTC time as ISO 8601 with seconds precision and a Z suffix."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
