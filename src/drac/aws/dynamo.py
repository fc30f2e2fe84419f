"""DynamoDB adapters: elements, plan versions, plan cache, token ledger, document registry.

Each adapter takes a boto3 DynamoDB *resource* Table object (or anything with the same
put_item / get_item / query / batch_writer methods).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from boto3.dynamodb.conditions import Attr, Key

from drac.clock import utc_now
from drac.models import (
    DocumentRecord,
    DocumentStatus,
    Element,
    LedgerEntry,
    PlanVersion,
    SectionPlan,
)
from drac.ports import ElementTable, Ledger, PlanCache, PlanStore

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
        old_count = sum(1 for _ in _query_all(
            self.table, KeyConditionExpression=Key("document_id").eq(document_id),
            ProjectionExpression="seq",
        ))
        with self.table.batch_writer() as batch:
            for seq, element in enumerate(elements):
                batch.put_item(
                    Item={"document_id": document_id, "seq": seq, "element_id": element.id,
                          "data": element.model_dump_json()}
                )
            for seq in range(len(elements), old_count):
                batch.delete_item(Key={"document_id": document_id, "seq": seq})

    def get_elements(self, document_id: str) -> list[Element]:
        """Return the document's elements in document order."""
        items = _query_all(
            self.table, KeyConditionExpression=Key("document_id").eq(document_id),
            ConsistentRead=True,
        )
        ordered = sorted(items, key=lambda item: int(item["seq"]))
        return [Element.model_validate_json(item["data"]) for item in ordered]


class DynamoPlanStore(PlanStore):
    """Plan versions keyed by (document_id, version); never overwritten."""

    def __init__(self, table: Any) -> None:
        """Wrap the plans table."""
        self.table = table

    def save_plan(self, plan: PlanVersion) -> None:
        """Store a new version; raises ValueError if that version already exists."""
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
                    "data": plan.model_dump_json(),
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
        return PlanVersion.model_validate_json(item["data"])

    def latest_version(self, document_id: str) -> int:
        """Return the highest stored version (0 when none)."""
        page = self.table.query(
            KeyConditionExpression=Key("document_id").eq(document_id),
            ScanIndexForward=False, Limit=1, ConsistentRead=True,
            ProjectionExpression="version",
        )
        items = page.get("Items", [])
        return int(items[0]["version"]) if items else 0


class DynamoPlanCache(PlanCache):
    """Section plans cached in the plans table under `cache#<key>` (version 0)."""

    def __init__(self, table: Any) -> None:
        """Wrap the plans table."""
        self.table = table

    def get(self, key: str) -> SectionPlan | None:
        """Return the cached plan for key, if any."""
        item = self.table.get_item(Key={"document_id": CACHE_PREFIX + key, "version": 0}).get(
            "Item"
        )
        return SectionPlan.model_validate_json(item["data"]) if item else None

    def put(self, key: str, plan: SectionPlan) -> None:
        """Remember a plan under key."""
        self.table.put_item(
            Item={"document_id": CACHE_PREFIX + key, "version": 0, "data": plan.model_dump_json()}
        )


class DynamoLedger(Ledger):
    """Model calls keyed by (document_id, entry) where entry sorts by time."""

    def __init__(self, table: Any) -> None:
        """Wrap the ledger table."""
        self.table = table
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
            }
        )


class DocumentRegistry:
    """Document records (status, pages, errors, timings) keyed by document_id."""

    def __init__(self, table: Any, source_index: str = "by-source") -> None:
        """Wrap the documents table and the name of its source-path index."""
        self.table = table
        self.source_index = source_index

    def get(self, document_id: str) -> DocumentRecord | None:
        """Return the record, or None."""
        item = self.table.get_item(Key={"document_id": document_id}, ConsistentRead=True).get(
            "Item"
        )
        if item is None:
            return None
        fields = {k: v for k, v in item.items() if k in DocumentRecord.model_fields}
        for name in ("pages", "active_version"):
            if fields.get(name) is not None:
                fields[name] = int(fields[name])
        return DocumentRecord.model_validate(fields)

    def put(self, record: DocumentRecord, **timings: float) -> None:
        """Store the record (updated_at set now), with optional timing attributes."""
        record.updated_at = utc_now()
        record.created_at = record.created_at or record.updated_at
        item = {k: v for k, v in record.model_dump(mode="json").items() if v is not None}
        item.update({f"timing_{name}": int(value) for name, value in timings.items()})
        self.table.put_item(Item=item)

    def set_status(
        self, document_id: str, status: DocumentStatus, *, error: str | None = None, **fields: Any
    ) -> DocumentRecord:
        """Change a document's status (and other fields); KeyError if it is unknown."""
        record = self.get(document_id)
        if record is None:
            raise KeyError(document_id)
        record.status = status
        record.error = error
        for name, value in fields.items():
            setattr(record, name, value)
        self.put(record)
        return record

    def by_source(self, source_path: str) -> list[str]:
        """Return the ids of documents registered from this object key."""
        items = _query_all(
            self.table, IndexName=self.source_index,
            KeyConditionExpression=Key("source_path").eq(source_path),
        )
        return sorted({item["document_id"] for item in items})

    def live(self, tenant: str | None = None) -> Iterator[DocumentRecord]:
        """Yield INDEXED and PARTIAL documents (of one tenant when given), paginating a scan."""
        condition = Attr("status").is_in([DocumentStatus.INDEXED.value,
                                          DocumentStatus.PARTIAL.value])
        if tenant:
            condition = condition & Attr("tenant").eq(tenant)
        kwargs: dict[str, Any] = {"FilterExpression": condition}
        while True:
            page = self.table.scan(**kwargs)
            for item in page.get("Items", []):
                record = self.get(item["document_id"])
                if record is not None:
                    yield record
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
