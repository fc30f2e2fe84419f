"""Event and state payload models of the Lambda handlers (keys and counts, never content)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_plus

from pydantic import BaseModel, ConfigDict, Field, model_validator

INCOMING_PREFIX = "incoming/"
SEQUENCER_WIDTH = 32


def event_order(sequencer: str | None, fallback: str = "") -> str:
    """A sortable form of an S3 event's sequencer: S3 says to right-pad the shorter of two
    sequencers with zeros and compare them as strings (events of one key only)."""
    if not sequencer:
        return fallback.ljust(SEQUENCER_WIDTH, "0")
    return sequencer.upper().ljust(SEQUENCER_WIDTH, "0")


class S3ObjectDetail(BaseModel):
    """The part of an EventBridge S3 event the pipeline uses, the key decoded."""

    model_config = ConfigDict(extra="ignore")

    bucket: str
    key: str
    delivered_key: str = ""
    """The key exactly as the event carried it (empty: the same as `key`)."""
    version_id: str | None = None
    sequencer: str | None = None
    size: int | None = None
    deletion_type: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_detail(cls, data: Any) -> Any:
        """S3's notifications carry keys URL-encoded ("red flower.pdf" arrives as
        "red+flower.pdf"), and Powertools' S3 EventBridge model decodes them so; AWS documents
        no encoding for EventBridge and published events show `:` raw, so the key as
        delivered is kept too (`key_forms`)."""
        if isinstance(data, dict) and isinstance(data.get("bucket"), dict):
            obj = data.get("object", {})
            return {
                "bucket": data["bucket"]["name"],
                "key": unquote_plus(obj.get("key", "")),
                "delivered_key": obj.get("key", ""),
                "version_id": obj.get("version-id"),
                "sequencer": obj.get("sequencer"),
                "size": obj.get("size"),
                "deletion_type": data.get("deletion-type"),
            }
        return data

    @property
    def key_forms(self) -> tuple[str, ...]:
        """The keys the object may have: decoded first, then as delivered when it differs."""
        return tuple(dict.fromkeys(k for k in (self.key, self.delivered_key) if k))

    def with_key(self, key: str) -> S3ObjectDetail:
        """The same event detail naming `key` (one of `key_forms`)."""
        return self.model_copy(update={"key": key})

    @property
    def tenant(self) -> str | None:
        """`incoming/<tenant>/<file>` names a tenant; `incoming/<file>` has none."""
        rest = self.key.removeprefix(INCOMING_PREFIX)
        parts = rest.split("/")
        return parts[0] if len(parts) > 1 and parts[0] else None

    @property
    def filename(self) -> str:
        """The object's file name."""
        return self.key.rsplit("/", 1)[-1]

    @property
    def is_folder(self) -> bool:
        """A key ending in '/' (what consoles create for folders) is no document."""
        return self.key.endswith("/")


class S3EventBridgeEvent(BaseModel):
    """An `Object Created` / `Object Deleted` event as EventBridge delivers it."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    detail_type: str = Field(alias="detail-type")
    source: str
    time: str = ""
    detail: S3ObjectDetail

    @property
    def order(self) -> str:
        """The upload order of this event among the events of its key."""
        return event_order(self.detail.sequencer, self.time)


class UploadedDocument(BaseModel):
    """An uploaded object (one version of it) and the document id of its content."""

    document_id: str
    tenant: str | None = None
    bucket: str
    key: str
    delivered_key: str = ""
    """The key exactly as the event carried it (empty: the same as `key`)."""
    version_id: str | None = None


class IngestInput(UploadedDocument):
    """Input of the ingest state machine (what the starter sends)."""

    sha256: str
    size: int
    previous_document: str | None = None
    strategy: dict[str, Any]


class ReplanRequest(BaseModel):
    """Detail of a `Replan Requested` event. It names a tenant (and stays inside it), or says
    `"all": true` to cover every tenant; `document_ids` narrows either to those documents."""

    model_config = ConfigDict(extra="forbid")

    document_ids: list[str] = Field(default_factory=list)
    all: bool = False
    tenant: str | None = None
    strategy: dict[str, Any] | str | None = None

    @model_validator(mode="after")
    def _scoped(self) -> ReplanRequest:
        if self.tenant is not None and not self.tenant.strip():
            raise ValueError("tenant must not be empty")
        if self.tenant is None and not self.all:
            raise ValueError('name a tenant, or set "all": true to re-plan every tenant')
        return self
