"""DynamoDB adapters: elements, plan versions, plan cache, token ledger, documents and sources.

Each adapter takes a boto3 DynamoDB *resource* Table object (or anything with the same
put_item / get_item / query / batch_writer methods).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from boto3.dynamodb.conditions import Key
from pydantic import BaseModel

from drac.aws.keys import plan_body_key
from drac.clock import utc_now
from drac.models import (
    DocumentRecord,
    DocumentStatus,
    Element,
    LedgerEntry,
    PlanVersion,
    SectionPlan,
)
from drac.ports import (
    ArtifactStore,
    DocumentRegistry,
    ElementTable,
    Ledger,
    PlanCache,
    PlanStore,
    SourceClaim,
)

CACHE_PREFIX = "cache#"


def _query_all(table: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Yield every item of a paginated query."""
    while True:
        page = table.query(**kwargs)
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


class DynamoElementTable(ElementTable):
    """Elements keyed by (document_id, seq), the element's JSON in `data`."""

    def __init__(self, table: Any) -> None:
        """Wrap the elements table."""
        self.table = table

    def put_elements(self, document_id: str, elements: Sequence[Element]) -> None:
        """Replace the document's elements: write the new ones, delete any left over."""
        old_count = sum(
            1
            for _ in _query_all(
                self.table,
                KeyConditionExpression=Key("document_id").eq(document_id),
                ProjectionExpression="seq",
            )
        )
        with self.table.batch_writer() as batch:
            for seq, element in enumerate(elements):
                batch.put_item(
                    Item={
                        "document_id": document_id,
                        "seq": seq,
                        "element_id": element.id,
                        "data": element.model_dump_json(),
                    }
                )
            for seq in range(len(elements), old_count):
                batch.delete_item(Key={"document_id": document_id, "seq": seq})

    def get_elements(self, document_id: str) -> list[Element]:
        """Return the document's elements in document order."""
        items = _query_all(
            self.table,
            KeyConditionExpression=Key("document_id").eq(document_id),
            ConsistentRead=True,
        )
        ordered = sorted(items, key=lambda item: int(item["seq"]))
        return [Element.model_validate_json(item["data"]) for item in ordered]


class DynamoPlanStore(PlanStore):
    """Plan versions: the body (which may hold thousands of chunks, past DynamoDB's 400 KB
    item limit) in S3, a pointer and a summary in the plans table, keyed by (document_id,
    version) and never overwritten."""

    def __init__(self, table: Any, bodies: ArtifactStore) -> None:
        """Wrap the plans table and the store holding plan bodies."""
        self.table = table
        self.bodies = bodies

    def save_plan(self, plan: PlanVersion) -> None:
        """Store the body, then the pointer; ValueError if that version already exists."""
        key = plan_body_key(plan.document_id, plan.version)
        self.bodies.put_text(key, plan.model_dump_json())
        usage = plan.usage
        try:
            self.table.put_item(
                Item={
                    "document_id": plan.document_id,
                    "version": plan.version,
                    "strategy": plan.strategy.name,
                    "planner": plan.strategy.planner,
                    "chunks": len(plan.chunk_ids_arrays),
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "created_at": plan.created_at,
                    "body_key": key,
                },
                ConditionExpression="attribute_not_exists(version)",
            )
        except self.table.meta.client.exceptions.ConditionalCheckFailedException as exc:
            raise ValueError(
                f"plan version {plan.version} of {plan.document_id} already exists"
            ) from exc

    def get_plan(self, document_id: str, version: int) -> PlanVersion:
        """Return one stored plan version; KeyError when absent."""
        item = self.table.get_item(
            Key={"document_id": document_id, "version": version}, ConsistentRead=True
        ).get("Item")
        if item is None:
            raise KeyError(f"{document_id} v{version}")
        return PlanVersion.model_validate_json(self.bodies.get_text(item["body_key"]))

    def latest_version(self, document_id: str) -> int:
        """Return the highest stored version (0 when none)."""
        page = self.table.query(
            KeyConditionExpression=Key("document_id").eq(document_id),
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
            ProjectionExpression="version",
        )
        items = page.get("Items", [])
        return int(items[0]["version"]) if items else 0


EXPIRES_AT = "expires_at"
"""The tables' DynamoDB TTL attribute: epoch seconds after which DynamoDB deletes the item."""


def _expiry(days: int) -> dict[str, int]:
    """The TTL attribute of an item kept `days` days from now (none when days is 0)."""
    if days <= 0:
        return {}
    return {EXPIRES_AT: int(time.time()) + days * 86_400}


class DynamoPlanCache(PlanCache):
    """Section plans cached in the plans table under `cache#<key>` (version 0), each kept
    `ttl_days` days (0: for ever); plan versions never expire."""

    def __init__(self, table: Any, ttl_days: int = 0) -> None:
        """Wrap the plans table."""
        self.table = table
        self.ttl_days = ttl_days

    def get(self, key: str) -> SectionPlan | None:
        """Return the cached plan for key, if any."""
        item = self.table.get_item(Key={"document_id": CACHE_PREFIX + key, "version": 0}).get(
            "Item"
        )
        return SectionPlan.model_validate_json(item["data"]) if item else None

    def put(self, key: str, plan: SectionPlan) -> None:
        """Remember a plan under key."""
        self.table.put_item(
            Item={
                "document_id": CACHE_PREFIX + key,
                "version": 0,
                "data": plan.model_dump_json(),
                **_expiry(self.ttl_days),
            }
        )


class DynamoLedger(Ledger):
    """Model calls keyed by (document_id, entry) where entry sorts by time, each kept
    `ttl_days` days (0: for ever)."""

    def __init__(self, table: Any, ttl_days: int = 0) -> None:
        """Wrap the ledger table."""
        self.table = table
        self.ttl_days = ttl_days
        self.entries: list[LedgerEntry] = []

    def record(self, entry: LedgerEntry) -> None:
        """Append one entry (also kept in memory for this invocation's metrics)."""
        at = entry.at or utc_now()
        self.entries.append(entry)
        self.table.put_item(
            Item={
                "document_id": entry.document_id,
                "entry": f"{at}#{uuid.uuid4().hex[:8]}",
                "stage": entry.stage,
                "model": entry.model,
                "input_tokens": entry.input_tokens,
                "output_tokens": entry.output_tokens,
                "latency_ms": int(entry.latency_ms),
                "outcome": entry.outcome,
                "at": at,
                **_expiry(self.ttl_days),
            }
        )


LIVE = (DocumentStatus.INDEXED.value, DocumentStatus.PARTIAL.value)
NO_TENANT = "-"
"""`live_tenant` of a live document without a tenant (a key attribute cannot be empty)."""


class IngestClaim(BaseModel):
    """What an ingest run found when it asked to ingest a document."""

    outcome: Literal["owned", "live", "busy"]
    """owned: this run ingests it; live: already INDEXED/PARTIAL; busy: another run is on it."""
    record: DocumentRecord | None = None
    busy_with: str | None = None


class DynamoDocumentRegistry(DocumentRegistry):
    """Documents (keyed by document_id) and sources (keyed by object key, with a `by-document`
    index). A live document carries `live_tenant`, the key of the sparse `live-documents`
    index the re-plan manifest pages through."""

    def __init__(
        self,
        table: Any,
        sources: Any,
        *,
        live_index: str = "live-documents",
        document_index: str = "by-document",
    ) -> None:
        """Wrap the documents and sources tables and the names of their indexes."""
        self.table = table
        self.sources = sources
        self.live_index = live_index
        self.document_index = document_index
        self._conditional = table.meta.client.exceptions.ConditionalCheckFailedException

    def get(self, document_id: str) -> DocumentRecord | None:
        """Return the record, or None."""
        loaded = self._load(document_id)
        return loaded[0] if loaded else None

    def put(self, record: DocumentRecord) -> None:
        """Store the whole record (updated_at now), replacing what is stored."""
        loaded = self._load(record.document_id)
        self._put_if_unchanged(record, loaded[1] if loaded else None)

    def claim_ingest(
        self, record: DocumentRecord, owner: str, running: Callable[[str], bool]
    ) -> IngestClaim:
        """Make `owner` the run that ingests the document, unless it is live already or another
        run that is still `running` is on it; the record is stored REGISTERED, the attempt
        counted. A run that ended without a trace (aborted) loses its claim."""
        for _ in range(5):  # optimistic: again when another run changed the record meanwhile
            loaded = self._load(record.document_id)
            current, revision = loaded if loaded else (None, None)
            if current is not None and current.live:
                return IngestClaim(outcome="live", record=current)
            other = current.owner if current is not None else None
            if other is not None and other != owner and running(other):
                return IngestClaim(outcome="busy", busy_with=other)
            attempt = (current.attempt if current else 0) + (0 if other == owner else 1)
            claimed = record.model_copy(
                update={
                    "status": DocumentStatus.REGISTERED,
                    "owner": owner,
                    "error": None,
                    "active_version": None,
                    "attempt": attempt,
                    "created_at": current.created_at if current else "",
                }
            )
            try:
                self._put_if_unchanged(claimed, revision)
            except self._conditional:
                continue
            return IngestClaim(outcome="owned", record=claimed)
        raise RuntimeError(f"document {record.document_id} keeps changing; try again")

    def update(self, document_id: str, *, owner: str | None = None, **fields: Any) -> bool:
        """Set fields of the record (of `owner`'s run only, when given); False when refused."""
        for _ in range(5):
            loaded = self._load(document_id)
            if loaded is None or (owner is not None and loaded[0].owner != owner):
                return False
            record, revision = loaded
            for name, value in fields.items():
                setattr(record, name, value)
            try:
                self._put_if_unchanged(record, revision)
            except self._conditional:
                continue
            return True
        raise RuntimeError(f"document {document_id} keeps changing; try again")

    def _load(self, document_id: str) -> tuple[DocumentRecord, int] | None:
        item = self.table.get_item(Key={"document_id": document_id}, ConsistentRead=True).get(
            "Item"
        )
        return (_record(item), int(item.get("revision", 0))) if item is not None else None

    def _put_if_unchanged(self, record: DocumentRecord, revision: int | None) -> None:
        """Write the record if nobody wrote it since `revision` was read (None: new record)."""
        item = _item(record)
        item["revision"] = (revision or 0) + 1
        if revision is None:
            condition, values = "attribute_not_exists(document_id)", None
        else:
            condition, values = (
                "revision = :seen OR attribute_not_exists(revision)",
                {":seen": revision},
            )
        kwargs: dict[str, Any] = {"Item": item, "ConditionExpression": condition}
        if values:
            kwargs["ExpressionAttributeValues"] = values
        self.table.put_item(**kwargs)

    def activate(
        self,
        document_id: str,
        version: int,
        status: DocumentStatus,
        *,
        owner: str | None = None,
    ) -> DocumentRecord | None:
        """Make `version` active with `status` in one conditional write (see the port)."""
        condition = (
            "attribute_exists(document_id) AND #status <> :deleted"
            " AND (attribute_not_exists(active_version) OR active_version < :version)"
        )
        values: dict[str, Any] = {
            ":deleted": DocumentStatus.DELETED.value,
            ":version": version,
            ":status": status.value,
            ":now": utc_now(),
            ":one": 1,
        }
        if owner is not None:
            condition += " AND #owner = :owner"
            values[":owner"] = owner
        else:
            condition += " AND #status IN (:indexed, :partial)"
            values[":indexed"], values[":partial"] = LIVE
        values[":live"] = _live_key_of(self.get(document_id))
        try:
            response = self.table.update_item(
                Key={"document_id": document_id},
                UpdateExpression=(
                    "SET active_version = :version, #status = :status, updated_at = :now,"
                    " live_tenant = :live ADD revision :one REMOVE #owner, #error"
                ),
                ConditionExpression=condition,
                ExpressionAttributeNames={
                    "#status": "status",
                    "#owner": "owner",
                    "#error": "error",
                },
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
        except self._conditional:
            return None
        return _record(response["Attributes"])

    def mark_deleted(self, document_id: str) -> None:
        """Set DELETED, with no active version, owner or place in the live index."""
        self.table.update_item(
            Key={"document_id": document_id},
            UpdateExpression=(
                "SET #status = :deleted, updated_at = :now ADD revision :one"
                " REMOVE active_version, #owner, live_tenant"
            ),
            ConditionExpression="attribute_exists(document_id)",
            ExpressionAttributeNames={"#status": "status", "#owner": "owner"},
            ExpressionAttributeValues={
                ":deleted": DocumentStatus.DELETED.value,
                ":now": utc_now(),
                ":one": 1,
            },
        )

    def mark_failed(self, document_id: str, error: str, *, owner: str) -> bool:
        """Set FAILED with the error, if `owner`'s run still owns the document."""
        try:
            self.table.update_item(
                Key={"document_id": document_id},
                UpdateExpression=(
                    "SET #status = :failed, #error = :error, updated_at = :now"
                    " ADD revision :one REMOVE #owner, live_tenant, active_version"
                ),
                ConditionExpression="#owner = :owner",
                ExpressionAttributeNames={
                    "#status": "status",
                    "#owner": "owner",
                    "#error": "error",
                },
                ExpressionAttributeValues={
                    ":failed": DocumentStatus.FAILED.value,
                    ":error": error[:2000],
                    ":owner": owner,
                    ":now": utc_now(),
                    ":one": 1,
                },
            )
        except self._conditional:
            return False
        return True

    def claim_source(self, source: str, document_id: str, order: str) -> SourceClaim:
        """Point the object key at the document unless a later upload of it is recorded.

        The document the key named before is kept on the source item, so claiming again for
        the same upload (a retried event) reports the same `previous`.
        """
        for _ in range(5):  # optimistic: again when another upload claimed it meanwhile
            old = self.sources.get_item(Key={"source": source}, ConsistentRead=True).get("Item")
            if old is not None and old["ord"] > order:
                return SourceClaim(claimed=False)
            if old is None:
                previous = None
            elif old["document_id"] == document_id:
                previous = old.get("previous")
            else:
                previous = old["document_id"]
            item = {
                "source": source,
                "document_id": document_id,
                "ord": order,
                "updated_at": utc_now(),
            }
            if previous:
                item["previous"] = previous
            try:
                if old is None:
                    self.sources.put_item(
                        Item=item,
                        ConditionExpression="attribute_not_exists(#source)",
                        ExpressionAttributeNames={"#source": "source"},
                    )
                else:
                    self.sources.put_item(
                        Item=item,
                        ConditionExpression="ord = :ord AND document_id = :doc",
                        ExpressionAttributeValues={":ord": old["ord"], ":doc": old["document_id"]},
                    )
            except self._conditional:
                continue
            return SourceClaim(claimed=True, previous=previous)
        raise RuntimeError(f"source {source} keeps changing; try again")

    def release_source(self, source: str, order: str) -> str | None:
        """Forget the object key unless a later upload is recorded; return its document."""
        try:
            response = self.sources.delete_item(
                Key={"source": source},
                ConditionExpression="attribute_exists(#source) AND ord <= :order",
                ExpressionAttributeNames={"#source": "source"},
                ExpressionAttributeValues={":order": order},
                ReturnValues="ALL_OLD",
            )
        except self._conditional:
            return None
        return response.get("Attributes", {}).get("document_id")

    def document_of(self, source: str) -> str | None:
        """The document the object key holds now (its last recorded upload), if any."""
        item = self.sources.get_item(Key={"source": source}, ConsistentRead=True).get("Item")
        return str(item["document_id"]) if item else None

    def sources_of(self, document_id: str) -> list[str]:
        """The object keys that hold the document now (the index is eventually consistent:
        callers check orphans from both sides of a race, see drac.commit)."""
        items = _query_all(
            self.sources,
            IndexName=self.document_index,
            KeyConditionExpression=Key("document_id").eq(document_id),
        )
        return sorted(item["source"] for item in items)

    def records(self, document_ids: Sequence[str]) -> dict[str, DocumentRecord]:
        """The records of these documents (BatchGetItem, 100 keys at a time; unknown ids are
        absent from the result)."""
        client = self.table.meta.client
        found: dict[str, DocumentRecord] = {}
        wanted = list(dict.fromkeys(document_ids))
        for start in range(0, len(wanted), 100):
            keys: list[dict[str, Any]] = [{"document_id": i} for i in wanted[start : start + 100]]
            request: dict[str, Any] = {self.table.name: {"Keys": keys, "ConsistentRead": True}}
            while request:
                response = client.batch_get_item(RequestItems=request)
                for item in response["Responses"].get(self.table.name, []):
                    record = _record(item)
                    found[record.document_id] = record
                request = response.get("UnprocessedKeys") or {}
        return found

    def live(self, tenant: str | None = None) -> Iterator[tuple[str, str | None]]:
        """Yield (document_id, tenant) of live documents, of one tenant or all, page by page
        from the sparse live-documents index."""
        if tenant is not None:
            items = _query_all(
                self.table,
                IndexName=self.live_index,
                KeyConditionExpression=Key("live_tenant").eq(tenant or NO_TENANT),
            )
        else:
            items = _scan_all(self.table, IndexName=self.live_index)
        for item in items:
            owner = item["live_tenant"]
            yield item["document_id"], None if owner == NO_TENANT else owner


def _scan_all(table: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Yield every item of a paginated scan."""
    while True:
        page = table.scan(**kwargs)
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


MAX_WARNINGS = 50
"""Warnings kept on a record (the full list is in the document's artifacts)."""


def _live_key_of(record: DocumentRecord | None) -> str:
    return (record.tenant if record and record.tenant else None) or NO_TENANT


def _item(record: DocumentRecord) -> dict[str, Any]:
    record.updated_at = utc_now()
    record.created_at = record.created_at or record.updated_at
    warnings = record.warnings
    if len(warnings) > MAX_WARNINGS:
        warnings = [
            *warnings[: MAX_WARNINGS - 1],
            f"... and {len(warnings) - MAX_WARNINGS + 1} more warnings",
        ]
    item = {k: v for k, v in record.model_dump(mode="json").items() if v is not None}
    item["warnings"] = warnings
    # `verification` is a map of six counts (about 130 bytes, far below DynamoDB's 400 KB item
    # limit: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html);
    # the flagged tokens, which grow with the document, stay in documents/<id>/verification.json
    item.pop("metadata", None)
    if record.metadata:  # as JSON text: DynamoDB takes no floats, and keys stay verbatim
        item["metadata"] = json.dumps(record.metadata, ensure_ascii=False, sort_keys=True)
    if record.live and record.active_version is not None:
        item["live_tenant"] = _live_key_of(record)
    return item


def _record(item: dict[str, Any]) -> DocumentRecord:
    fields = {k: v for k, v in item.items() if k in DocumentRecord.model_fields}
    if isinstance(fields.get("metadata"), str):
        fields["metadata"] = json.loads(fields["metadata"])
    for name in ("pages", "active_version", "conversion_failures", "attempt"):
        if fields.get(name) is not None:
            fields[name] = int(fields[name])
    return DocumentRecord.model_validate(fields)
