"""Event and state payload models of the Lambda handlers (keys and counts, never content)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_plus

from pydantic import BaseModel, ConfigDict, Field, model_validator

INCOMING_PREFIX = "incoming/"


class S3ObjectDetail(BaseModel):
    """The part of an EventBridge S3 event the pipeline uses.

    S3 writes the object key into its events URL-encoded ("red flower.pdf" arrives as
    "red+flower.pdf"); read from an event's `detail`, `key` is the decoded key, as stored.
    """

    model_config = ConfigDict(extra="ignore")

    bucket: str
    key: str
    version_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_detail(cls, data: Any) -> Any:
        if isinstance(data, dict) and "bucket" in data and isinstance(data["bucket"], dict):
            obj = data.get("object", {})
            return {"bucket": data["bucket"]["name"], "key": unquote_plus(obj.get("key", "")),
                    "version_id": obj.get("version-id")}
        return data

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


class S3EventBridgeEvent(BaseModel):
    """An `Object Created` / `Object Deleted` event as EventBridge delivers it."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    detail_type: str = Field(alias="detail-type")
    source: str
    detail: S3ObjectDetail


class UploadedDocument(BaseModel):
    """An uploaded object and the document id of its content."""

    document_id: str
    tenant: str | None = None
    bucket: str
    key: str


class IngestInput(UploadedDocument):
    """Input of the ingest state machine (what the starter sends)."""

    strategy: dict[str, Any]


class ReplanRequest(BaseModel):
    """Detail of a `Replan Requested` event: documents (ids) or all, tenant, strategy."""

    model_config = ConfigDict(extra="forbid")

    document_ids: list[str] = Field(default_factory=list)
    all: bool = False
    tenant: str | None = None
    strategy: dict[str, Any] | str | None = None

    @model_validator(mode="after")
    def _some_documents(self) -> ReplanRequest:
        if not self.all and not self.document_ids:
            raise ValueError("name document_ids or set all=true")
        return self
