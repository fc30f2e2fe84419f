"""Register points a new version of a key at the earlier one only within the tenant; a
ConvertBatch finds the earlier version's batch by its page images, model and prompt (kept by
digest, or by number for a version kept before digests)."""

from __future__ import annotations

from typing import Any

from drac.aws import keys
from drac.aws.versions import batch_digest, earlier_batch, keep_batch, point_to_earlier
from drac.documents.vision.incremental import StoredBatch, prompt_digest
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


def test_an_earlier_version_lends_the_batch_with_the_same_pages_wherever_it_was(
    cloud: Any,
) -> None:
    rt, _ = cloud
    _record(rt, OLD, "acme")
    keep_batch(rt, OLD, _kept(OLD))
    point_to_earlier(rt, NEW, OLD, "acme")
    earlier = earlier_batch(rt, NEW, ["a", "b"], "m", 0)
    assert earlier is not None and earlier.document_id == OLD
    assert [b.markdown for b in earlier.batches] == [_kept(OLD).markdown]
    assert earlier_batch(rt, NEW, ["b", "a"], "m", 0) is None  # the same pages in another order
    assert earlier_batch(rt, NEW, ["a"], "m", 0) is None  # part of the batch
    assert earlier_batch(rt, NEW, ["a", "b"], "other model", 0) is None
    assert earlier_batch(rt, NEW, [], "m", 0) is None


def test_a_batch_asked_with_another_prompt_is_not_found(cloud: Any) -> None:
    rt, _ = cloud
    _record(rt, OLD, "acme")
    keep_batch(rt, OLD, _kept(OLD).model_copy(update={"prompt": "an older prompt"}))
    point_to_earlier(rt, NEW, OLD, "acme")
    assert earlier_batch(rt, NEW, ["a", "b"], "m", 0) is None


def test_another_tenants_document_or_the_same_document_is_never_pointed_at(cloud: Any) -> None:
    rt, _ = cloud
    _record(rt, OLD, "beta")
    keep_batch(rt, OLD, _kept(OLD))
    point_to_earlier(rt, NEW, OLD, "acme")
    point_to_earlier(rt, NEW, NEW, "acme")
    point_to_earlier(rt, NEW, "../../secrets", "acme")
    assert not rt.artifacts.exists(keys.earlier_version_key(NEW))
    assert earlier_batch(rt, NEW, ["a", "b"], "m", 0) is None


def test_a_pointer_naming_something_else_than_a_document_is_ignored(cloud: Any) -> None:
    rt, _ = cloud
    rt.artifacts.put_text(keys.earlier_version_key(NEW), '{"document_id": "../pages/x"}')
    assert earlier_batch(rt, NEW, ["a", "b"], "m", 0) is None
    rt.artifacts.put_text(keys.earlier_version_key(NEW), "[1, 2]")
    assert earlier_batch(rt, NEW, ["a", "b"], "m", 0) is None


def test_a_version_kept_by_batch_number_lends_its_batch_only_for_the_same_pages(
    cloud: Any,
) -> None:
    rt, _ = cloud
    _record(rt, OLD, "acme")
    point_to_earlier(rt, NEW, OLD, "acme")
    # the layout before batches were kept by digest: batch 3 of the earlier version
    rt.artifacts.put_text(f"documents/{OLD}/batches/00003.reuse.json", _kept(OLD).model_dump_json())
    assert not rt.artifacts.exists(
        keys.reuse_key(OLD, batch_digest(["a", "b"], "m", prompt_digest()))
    )
    earlier = earlier_batch(rt, NEW, ["a", "b"], "m", 3)
    assert earlier is not None and earlier.document_id == OLD
    assert [b.markdown for b in earlier.batches] == [_kept(OLD).markdown]
    assert earlier_batch(rt, NEW, ["a", "b"], "m", 2) is None  # another number: not read
    assert earlier_batch(rt, NEW, ["a", "c"], "m", 3) is None  # a changed page
    assert earlier_batch(rt, NEW, ["b", "a"], "m", 3) is None  # the pages in another order
    assert earlier_batch(rt, NEW, ["a", "b"], "other model", 3) is None
    stale = _kept(OLD).model_copy(update={"prompt": "an older prompt"})
    rt.artifacts.put_text(f"documents/{OLD}/batches/00003.reuse.json", stale.model_dump_json())
    assert earlier_batch(rt, NEW, ["a", "b"], "m", 3) is None
    rt.artifacts.put_text(f"documents/{OLD}/batches/00003.reuse.json", "not json")
    assert earlier_batch(rt, NEW, ["a", "b"], "m", 3) is None


def test_a_batch_kept_by_digest_is_found_before_the_numbered_one(cloud: Any) -> None:
    rt, _ = cloud
    _record(rt, OLD, "acme")
    point_to_earlier(rt, NEW, OLD, "acme")
    keep_batch(rt, OLD, _kept(OLD))
    numbered = _kept(OLD).model_copy(update={"markdown": "kept by number"})
    rt.artifacts.put_text(keys.numbered_batch_key(OLD, 0), numbered.model_dump_json())
    earlier = earlier_batch(rt, NEW, ["a", "b"], "m", 0)
    assert earlier is not None and [b.markdown for b in earlier.batches] == [_kept(OLD).markdown]
