"""Register points a new version of a key at the earlier one only within the tenant."""

from __future__ import annotations

from typing import Any

from drac.aws import keys
from drac.aws.versions import earlier_batch, keep_batch, point_to_earlier
from drac.documents.incremental import StoredBatch, prompt_digest
from drac.models import DocumentRecord

NEW = "d" + "1" * 19
OLD = "d" + "2" * 19


def _record(rt: Any, document_id: str, tenant: str | None) -> None:
    rt.registry.put(
        DocumentRecord(
            document_id=document_id, source="a.pdf", sha256="0" * 64, tenant=tenant, format="pdf"
        )
    )


def _kept(document_id: str) -> StoredBatch:
    return StoredBatch(
        pages=[1, 2],
        digests=["a", "b"],
        model="m",
        prompt=prompt_digest(),
        markdown=f"<!-- Page 1 -->\n\n{document_id}\n\n<!-- Page 2 -->\n\nTwo.",
    )


def test_an_earlier_version_of_the_same_tenant_lends_its_batch_of_the_same_number(
    cloud: Any,
) -> None:
    rt, _ = cloud
    _record(rt, OLD, "acme")
    keep_batch(rt, OLD, 3, _kept(OLD))
    point_to_earlier(rt, NEW, OLD, "acme")
    earlier = earlier_batch(rt, NEW, 3)
    assert earlier is not None and earlier.document_id == OLD
    assert [b.markdown for b in earlier.batches] == [_kept(OLD).markdown]
    assert earlier_batch(rt, NEW, 4) is None  # no batch 4 was kept


def test_another_tenants_document_or_the_same_document_is_never_pointed_at(cloud: Any) -> None:
    rt, _ = cloud
    _record(rt, OLD, "beta")
    keep_batch(rt, OLD, 0, _kept(OLD))
    point_to_earlier(rt, NEW, OLD, "acme")
    point_to_earlier(rt, NEW, NEW, "acme")
    point_to_earlier(rt, NEW, "../../secrets", "acme")
    assert not rt.artifacts.exists(keys.earlier_version_key(NEW))
    assert earlier_batch(rt, NEW, 0) is None


def test_a_pointer_naming_something_else_than_a_document_is_ignored(cloud: Any) -> None:
    rt, _ = cloud
    rt.artifacts.put_text(keys.earlier_version_key(NEW), '{"document_id": "../pages/x"}')
    assert earlier_batch(rt, NEW, 0) is None
    rt.artifacts.put_text(keys.earlier_version_key(NEW), "[1, 2]")
    assert earlier_batch(rt, NEW, 0) is None
