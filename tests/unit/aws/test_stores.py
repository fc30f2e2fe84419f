"""S3 and DynamoDB adapters on moto."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from drac.aws.dynamo import (
    EXPIRES_AT,
    DynamoElementTable,
    DynamoLedger,
    DynamoPlanCache,
    DynamoPlanStore,
)
from drac.aws.s3 import S3ArtifactStore
from drac.models import (
    DocumentRecord,
    DocumentStatus,
    Element,
    ElementKind,
    LedgerEntry,
    SectionPlan,
    VerificationCounts,
)
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

    s3 = aws.client("s3")
    s3.create_bucket(Bucket="art")
    bodies = S3ArtifactStore(s3, "art")
    store = DynamoPlanStore(make_table(aws, "plans", "document_id", "version"), bodies)
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
    # the body is in S3 (a big plan would pass DynamoDB's 400 KB item limit), a pointer in
    # the table
    (item,) = store.table.scan()["Items"]
    assert item["body_key"] == "plans/d/v00001.json" and "data" not in item
    assert bodies.get_text("plans/d/v00001.json") == plan.model_dump_json()


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


def _expires_in_days(item: dict[str, Any]) -> float:
    return (int(item[EXPIRES_AT]) - time.time()) / 86_400


def test_ledger_entries_and_cached_plans_expire_after_their_days(aws: Any) -> None:
    ledger_table = make_table(aws, "ledger", "document_id", "entry", sk_type="S")
    DynamoLedger(ledger_table, ttl_days=400).record(
        LedgerEntry(document_id="d", stage="conversion", model="m"))
    (entry,) = ledger_table.scan()["Items"]
    assert 399.9 < _expires_in_days(entry) <= 400
    plans = make_table(aws, "plans", "document_id", "version")
    plan = SectionPlan(section_id="s", chunks=(("e1",),), planner="rules")
    DynamoPlanCache(plans, ttl_days=90).put("key-1", plan)
    (cached,) = plans.scan()["Items"]
    assert 89.9 < _expires_in_days(cached) <= 90
    assert DynamoPlanCache(plans).get("key-1") == plan
    # 0 days: kept for ever (no TTL attribute at all)
    DynamoLedger(ledger_table, ttl_days=0).record(
        LedgerEntry(document_id="d2", stage="conversion", model="m"))
    kept = [i for i in ledger_table.scan()["Items"] if i["document_id"] == "d2"]
    assert kept and EXPIRES_AT not in kept[0]


def test_registry_live_index_is_sparse_and_paged_by_tenant(cloud: Any) -> None:
    rt, _ = cloud
    registry = rt.registry
    for doc_id, tenant in (("d1", "acme"), ("d2", None), ("d3", "acme")):
        registry.put(DocumentRecord(document_id=doc_id, source="a.pdf", sha256="0" * 64,
                                    tenant=tenant, pages=3, owner=f"run-{doc_id}"))
    for doc_id in ("d1", "d2"):
        assert registry.activate(doc_id, 1, DocumentStatus.INDEXED, owner=f"run-{doc_id}")
    record = registry.get("d1")
    assert record is not None and record.status is DocumentStatus.INDEXED
    assert record.active_version == 1 and record.pages == 3 and record.updated_at
    assert sorted(registry.live()) == [("d1", "acme"), ("d2", None)]
    assert list(registry.live("acme")) == [("d1", "acme")]
    registry.mark_deleted("d1")
    assert list(registry.live("acme")) == []
    item = registry.table.get_item(Key={"document_id": "d1"})["Item"]
    assert "live_tenant" not in item and "active_version" not in item


def test_registry_keeps_records_under_the_item_limit(cloud: Any) -> None:
    rt, _ = cloud
    warnings = [f"page {n}: the model's text is shorter than the page's text layer" * 3
                for n in range(5000)]
    rt.registry.put(DocumentRecord(document_id="d1", source="a.pdf", sha256="0" * 64,
                                   warnings=warnings))
    item = rt.registry.table.get_item(Key={"document_id": "d1"})["Item"]
    assert len(json.dumps(item, default=str)) < 400_000
    assert item["warnings"][-1] == "... and 4951 more warnings"


def test_claims_are_ordered_and_a_retried_claim_reports_the_same_previous(cloud: Any) -> None:
    rt, _ = cloud
    registry = rt.registry
    assert registry.claim_source("k", "d1", "01").previous is None
    first = registry.claim_source("k", "d2", "02")
    assert first.claimed and first.previous == "d1"
    again = registry.claim_source("k", "d2", "02")  # the same event handled twice
    assert again.claimed and again.previous == "d1"
    assert not registry.claim_source("k", "d3", "015").claimed  # an older upload
    assert registry.sources_of("d2") == ["k"] and registry.sources_of("d1") == []
    assert registry.release_source("k", "01") is None  # an older delete
    assert registry.release_source("k", "03") == "d2"
    assert registry.sources_of("d2") == []


def test_the_verification_counts_round_trip_as_six_numbers(cloud: Any) -> None:
    rt, _ = cloud
    counts = VerificationCounts(
        pages_checked=5000, flagged_pages=4999, unsupported=10**9, missing=7, suspect_rows=3,
        held_back=4999,
    )  # fmt: skip
    record = DocumentRecord(document_id="d1", source="a.pdf", sha256="0" * 64)
    rt.registry.put(record.model_copy(update={"verification": counts}))
    item = rt.registry.table.get_item(Key={"document_id": "d1"})["Item"]
    assert len(json.dumps(item["verification"], default=str)) < 200  # whatever the document
    assert rt.registry.get("d1").verification == counts
