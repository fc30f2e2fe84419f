"""S3 and DynamoDB adapters on moto."""

from __future__ import annotations

from typing import Any

import pytest

from drac.aws.dynamo import (
    DocumentRegistry,
    DynamoElementTable,
    DynamoLedger,
    DynamoPlanStore,
)
from drac.aws.s3 import S3ArtifactStore
from drac.models import DocumentRecord, DocumentStatus, Element, ElementKind, LedgerEntry
from tests.unit.aws.conftest import make_table


def test_s3_store_round_trip_and_missing_keys(aws: Any) -> None:
    s3 = aws.client("s3")
    s3.create_bucket(Bucket="art")
    store = S3ArtifactStore(s3, "art", prefix="p/")
    store.put_text("documents/d/document.md", "# Título\n")
    assert store.get_text("documents/d/document.md") == "# Título\n"
    assert s3.get_object(Bucket="art", Key="p/documents/d/document.md")["Body"].read()
    assert store.exists("documents/d/document.md") and not store.exists("nope")
    with pytest.raises(KeyError):
        store.get_bytes("nope")


def elements(n: int) -> list[Element]:
    out = [Element(id="h1", kind=ElementKind.HEADING, text="# Plan", page=1, level=1)]
    out += [Element(id=f"p{i}", kind=ElementKind.PARAGRAPH, text=f"para {i}", page=1,
                    ancestors=("h1",)) for i in range(1, n)]
    return out


def test_elements_are_replaced_in_order(aws: Any) -> None:
    table = DynamoElementTable(make_table(aws, "el", "document_id", "seq"))
    table.put_elements("d", elements(30))
    table.put_elements("d", elements(12))  # a shorter re-parse leaves nothing stale behind
    got = table.get_elements("d")
    assert [e.id for e in got] == ["h1", *[f"p{i}" for i in range(1, 12)]]
    assert table.get_elements("other") == []


def test_plan_versions_are_never_overwritten(aws: Any) -> None:
    from drac.models import PlanVersion, SectionPlan, Strategy

    store = DynamoPlanStore(make_table(aws, "plans", "document_id", "version"))
    assert store.latest_version("d") == 0
    plan = PlanVersion(
        document_id="d", version=1, strategy=Strategy(), created_at="2026-11-30T00:00:00Z",
        sections=(SectionPlan(section_id="s1", chunks=(("h1", "p1"),), planner="rules"),),
    )
    store.save_plan(plan)
    assert store.latest_version("d") == 1
    assert store.get_plan("d", 1).chunk_ids_arrays == plan.chunk_ids_arrays
    with pytest.raises(ValueError, match="already exists"):
        store.save_plan(plan)
    with pytest.raises(KeyError):
        store.get_plan("d", 2)


def test_ledger_keeps_every_call(aws: Any) -> None:
    table = make_table(aws, "ledger", "document_id", "entry", sk_type="S")
    ledger = DynamoLedger(table)
    for _ in range(3):  # same timestamp: entries must not overwrite each other
        ledger.record(LedgerEntry(document_id="d", stage="conversion", model="m",
                                  input_tokens=1000, output_tokens=50,
                                  at="2026-11-30T00:00:00Z"))
    items = table.scan()["Items"]
    assert len(items) == 3 and len(ledger.entries) == 3
    assert {int(i["input_tokens"]) for i in items} == {1000}


def test_registry_status_source_lookup_and_live_scan(aws: Any) -> None:
    registry = DocumentRegistry(make_table(aws, "docs", "document_id", None, gsi="source_path"))
    for doc_id, tenant, key in (("d1", "acme", "incoming/acme/a.pdf"),
                                ("d2", None, "incoming/b.pdf"),
                                ("d3", "acme", "incoming/acme/a.pdf")):
        registry.put(DocumentRecord(document_id=doc_id, source=key.rsplit("/", 1)[-1],
                                    source_path=key, sha256="0" * 64, tenant=tenant, pages=3))
    registry.set_status("d1", DocumentStatus.INDEXED, active_version=1)
    registry.set_status("d2", DocumentStatus.PARTIAL, active_version=1)
    record = registry.get("d1")
    assert record.status is DocumentStatus.INDEXED and record.active_version == 1
    assert record.pages == 3 and record.updated_at
    assert registry.by_source("incoming/acme/a.pdf") == ["d1", "d3"]
    assert {r.document_id for r in registry.live()} == {"d1", "d2"}
    assert [r.document_id for r in registry.live("acme")] == ["d1"]
    with pytest.raises(KeyError):
        registry.set_status("missing", DocumentStatus.FAILED)
