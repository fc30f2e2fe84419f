"""Metadata that changes after its document (drac.aws.stages.late_metadata) on moto: a sidecar
uploaded, replaced or deleted later and drac- tags added or deleted reach the record and start
a re-plan of that one document with its active version's strategy; old or repeated events
never bring old metadata back; documents being ingested or re-planned make the event wait."""

from __future__ import annotations

import json
from typing import Any

import pytest

from drac.aws import keys
from drac.aws.events import S3EventBridgeEvent
from drac.aws.runtime import Runtime
from drac.aws.stages.commit import IndexInput, PrepareInput, RangeItem, index_range, prepare_plan
from drac.aws.stages.errors import MetadataWaits
from drac.aws.stages.late_metadata import apply_metadata_event
from drac.aws.stages.parse import ParseInput, parse_converted
from drac.aws.stages.planning import (
    PlanSectionInput,
    SectionInput,
    SectionItem,
    plan_one_section,
    section_document,
)
from drac.aws.stages.starter import start_ingest
from drac.models import DocumentRecord, DocumentStatus, PlanVersion, Strategy
from drac.strategies import PRESETS
from tests.fakes import FakeBedrockRuntime

KEY = "incoming/acme/a.md"
SIDECAR = KEY + ".metadata.json"
STRATEGY = Strategy(name="custom", target_chars=700)


def event(
    key: str,
    detail_type: str = "Object Created",
    sequencer: str | None = "00A1",
    version: str | None = None,
) -> S3EventBridgeEvent:
    """An S3 event as EventBridge delivers it (tag events carry no sequencer or size)."""
    obj: dict[str, Any] = {"key": key, "etag": "e"}
    if sequencer:
        obj["sequencer"] = sequencer
    if detail_type == "Object Created":
        obj["size"] = 10
    if version:
        obj["version-id"] = version
    return S3EventBridgeEvent.model_validate(
        {
            "detail-type": detail_type,
            "source": "aws.s3",
            "time": "2026-12-01T00:00:00Z",
            "detail": {"bucket": {"name": "docs"}, "object": obj},
        }
    )


def sidecar(attributes: dict[str, Any]) -> bytes:
    return json.dumps({"metadataAttributes": attributes}).encode()


@pytest.fixture
def live(cloud: Any) -> Runtime:
    """A live document at KEY (active version 1, indexed with dept=hr) and a re-plan
    machine whose executions wait (so the test sees them running)."""
    rt, _ = cloud
    sfn = rt.client("stepfunctions")
    created = sfn.create_state_machine(
        name="Drac-replan",
        roleArn="arn:aws:iam::123456789012:role/r",
        definition=json.dumps(
            {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 600, "End": True}}}
        ),
    )
    rt.resources.replan_state_machine_arn = created["stateMachineArn"]
    s3 = rt.client("s3")
    s3.put_object(Bucket="docs", Key=KEY, Body=b"# A\n\ntext\n", Metadata={"drac-dept": "hr"})
    rt.registry.put(
        DocumentRecord(
            document_id="d1",
            source="a.md",
            source_path=KEY,
            sha256="0" * 64,
            tenant="acme",
            status=DocumentStatus.INDEXED,
            active_version=1,
            metadata={"dept": "hr"},
        )
    )
    assert rt.registry.claim_source(KEY, "d1", "00A0").claimed
    rt.plans.save_plan(
        PlanVersion(
            document_id="d1",
            version=1,
            strategy=STRATEGY,
            sections=(),
            created_at="2026-12-01T00:00:00Z",
        )
    )
    rt.artifacts.put_text(keys.chunk_metadata_key("d1", 1), json.dumps({"dept": "hr"}))
    return rt


def stored(rt: Runtime) -> dict[str, Any]:
    """The document's metadata as its record holds it."""
    record = rt.registry.get("d1")
    assert record is not None
    return dict(record.metadata)


def replans(rt: Runtime) -> list[dict[str, Any]]:
    sfn = rt.client("stepfunctions")
    runs = sfn.list_executions(stateMachineArn=rt.resources.replan_state_machine_arn)
    return [sfn.describe_execution(executionArn=r["executionArn"]) for r in runs["executions"]]


def finish_replans(rt: Runtime, version: int) -> None:
    """What a finished re-plan leaves: version N active, indexed with the record's metadata."""
    sfn = rt.client("stepfunctions")
    for run in replans(rt):
        sfn.stop_execution(executionArn=run["executionArn"])
    record = rt.registry.get("d1")
    assert record is not None
    rt.registry.update("d1", active_version=version)
    rt.plans.save_plan(
        PlanVersion(
            document_id="d1",
            version=version,
            strategy=STRATEGY,
            sections=(),
            created_at="2026-12-01T00:00:00Z",
        )
    )
    rt.artifacts.put_text(keys.chunk_metadata_key("d1", version), json.dumps(record.metadata))


def test_a_late_sidecar_is_stored_and_starts_a_replan_of_its_document(live: Runtime) -> None:
    rt = live
    rt.client("s3").put_object(
        Bucket="docs", Key=SIDECAR, Body=sidecar({"dept": "legal", "year": 2024})
    )
    result = start_ingest(rt, event(SIDECAR))
    assert result.outcome == "reindexing" and result.document_id == "d1"
    record = rt.registry.get("d1")
    assert record is not None and record.metadata == {"dept": "legal", "year": 2024}
    (run,) = replans(rt)
    assert run["name"] == result.execution and run["name"].startswith("meta-d1-v1-")
    payload = json.loads(run["input"])
    # the re-plan machine's input is an event as the rule passes it: admin source, one
    # document of its tenant, the active version's strategy (no preset drift)
    assert payload["source"] == "drac.admin"
    assert payload["detail"]["document_ids"] == ["d1"]
    assert payload["detail"]["tenant"] == "acme" and payload["detail"]["all"] is False
    assert Strategy.model_validate(payload["detail"]["strategy"]) == STRATEGY
    # the ingest machine started nothing: a sidecar is never a document
    sfn = rt.client("stepfunctions")
    assert (
        sfn.list_executions(stateMachineArn=rt.resources.ingest_state_machine_arn)["executions"]
        == []
    )


def test_a_repeated_or_old_event_never_brings_old_metadata_back(live: Runtime) -> None:
    rt = live
    s3 = rt.client("s3")
    first = s3.put_object(Bucket="docs", Key=SIDECAR, Body=sidecar({"dept": "legal"}))
    s3.put_object(Bucket="docs", Key=SIDECAR, Body=sidecar({"dept": "ops"}))
    old = event(SIDECAR, sequencer="00A2", version=first["VersionId"])  # the first upload's
    assert apply_metadata_event(rt, old).outcome == "reindexing"
    assert stored(rt) == {"dept": "ops"}
    finish_replans(rt, 2)
    for again in (old, event(SIDECAR, sequencer="00A3")):
        assert apply_metadata_event(rt, again).outcome == "unchanged"
    assert stored(rt) == {"dept": "ops"}
    assert all(r["status"] == "ABORTED" for r in replans(rt))  # no second re-plan


def test_a_deleted_sidecar_leaves_the_objects_own_metadata(live: Runtime) -> None:
    rt = live
    s3 = rt.client("s3")
    s3.put_object(Bucket="docs", Key=SIDECAR, Body=sidecar({"dept": "legal"}))
    apply_metadata_event(rt, event(SIDECAR))
    finish_replans(rt, 2)
    s3.delete_object(Bucket="docs", Key=SIDECAR)
    result = apply_metadata_event(rt, event(SIDECAR, "Object Deleted", sequencer="00A5"))
    assert result.outcome == "reindexing"
    assert stored(rt) == {"dept": "hr"}


def test_tags_added_and_deleted_later_are_metadata(live: Runtime) -> None:
    rt = live
    s3 = rt.client("s3")
    version = s3.head_object(Bucket="docs", Key=KEY)["VersionId"]
    s3.put_object_tagging(
        Bucket="docs",
        Key=KEY,
        Tagging={
            "TagSet": [
                {"Key": "drac-dept", "Value": "finance"},
                {"Key": "drac-year", "Value": "2025"},
                {"Key": "backup", "Value": "daily"},
            ]
        },
    )
    added = event(KEY, "Object Tags Added", sequencer=None, version=version)
    assert apply_metadata_event(rt, added).outcome == "reindexing"
    assert stored(rt) == {"dept": "finance", "year": 2025}
    finish_replans(rt, 2)
    s3.delete_object_tagging(Bucket="docs", Key=KEY)
    deleted = event(KEY, "Object Tags Deleted", sequencer=None, version=version)
    assert apply_metadata_event(rt, deleted).outcome == "reindexing"
    assert stored(rt) == {"dept": "hr"}
    # a sidecar's own tags are nobody's metadata
    s3.put_object(Bucket="docs", Key=SIDECAR, Body=sidecar({"dept": "x"}))
    assert apply_metadata_event(rt, event(SIDECAR, "Object Tags Added", None)).outcome == (
        "ignored"
    )


def test_metadata_for_a_key_without_a_document_does_nothing(live: Runtime) -> None:
    rt = live
    s3 = rt.client("s3")
    s3.put_object(
        Bucket="docs", Key="incoming/acme/none.md.metadata.json", Body=sidecar({"dept": "legal"})
    )
    result = start_ingest(rt, event("incoming/acme/none.md.metadata.json"))
    assert result.outcome == "no_document" and result.document_id is None
    outside = "elsewhere/a.md.metadata.json"  # only incoming/ holds documents
    assert apply_metadata_event(rt, event(outside)).outcome == "no_document"
    assert replans(rt) == []
    assert stored(rt) == {"dept": "hr"}


def test_metadata_of_a_document_being_ingested_or_replanned_waits(live: Runtime) -> None:
    rt = live
    s3 = rt.client("s3")
    s3.put_object(Bucket="docs", Key=SIDECAR, Body=sidecar({"dept": "legal"}))
    for status in (DocumentStatus.REGISTERED, DocumentStatus.CONVERTED):
        rt.registry.update("d1", status=status)
        with pytest.raises(MetadataWaits, match="being ingested"):
            apply_metadata_event(rt, event(SIDECAR))
    rt.registry.update("d1", status=DocumentStatus.INDEXED)
    assert apply_metadata_event(rt, event(SIDECAR)).outcome == "reindexing"
    s3.put_object(Bucket="docs", Key=SIDECAR, Body=sidecar({"dept": "ops"}))
    with pytest.raises(MetadataWaits, match="a metadata re-plan of d1 runs"):
        apply_metadata_event(rt, event(SIDECAR, sequencer="00A9"))
    assert len(replans(rt)) == 1
    rt.registry.update("d1", status=DocumentStatus.FAILED)
    assert apply_metadata_event(rt, event(SIDECAR)).outcome == "not_live"


def test_metadata_breaking_a_limit_leaves_record_and_index_alone(live: Runtime) -> None:
    from drac.aws.lambda_support import metrics

    rt = live
    rt.client("s3").put_object(Bucket="docs", Key=SIDECAR, Body=sidecar({"tenant": "beta"}))
    metrics.clear_metrics()
    assert apply_metadata_event(rt, event(SIDECAR)).outcome == "refused"
    # the metric the MetadataRefused alarm watches (infra/observability.py), counted once
    assert metrics.provider.metric_set["MetadataRefused"]["Value"] == [1.0]
    metrics.clear_metrics()
    assert stored(rt) == {"dept": "hr"}
    assert replans(rt) == []


def test_racing_refreshers_converge_on_what_s3_holds_last(live: Runtime, monkeypatch: Any) -> None:
    """A refresher that read S3 before a change writes after the one that read it after:
    it reads S3 again after its write, sees the change and writes it back."""
    import drac.aws.stages.late_metadata as late

    rt = live
    s3 = rt.client("s3")
    s3.put_object(Bucket="docs", Key=SIDECAR, Body=sidecar({"dept": "legal"}))
    reads = iter([{"dept": "stale"}])  # the first read sees the state before the change
    real = late.current_metadata

    def current(*args: Any) -> Any:
        return next(reads, None) or real(*args)

    monkeypatch.setattr(late, "current_metadata", current)
    assert apply_metadata_event(rt, event(SIDECAR)).outcome == "reindexing"
    assert stored(rt) == {"dept": "legal"}


def test_a_replan_whose_plans_are_cached_indexes_the_records_new_metadata(
    cloud: Any, scripted_model: Any, monkeypatch: Any
) -> None:
    """The metadata re-plan of an LLM-planned document: the planner model is not called again
    (the section plans come from the plan cache), and the new version's chunks, the same
    texts, are indexed with the record's metadata as it is now."""

    rt, opensearch = cloud
    rt._clients["bedrock-runtime"] = FakeBedrockRuntime(None, "google.gemma-3-27b-it")  # Titan
    llm = PRESETS["llm"]
    model = scripted_model(['[["h1", "p1"], ["h2", "p2"]]'])
    monkeypatch.setattr(rt, "text_model", lambda _name: model)
    rt.registry.put(DocumentRecord(document_id="d1", source="a.md", sha256="0" * 64, owner="r1"))
    rt.artifacts.put_text(
        keys.markdown_key("d1"),
        "# Returns\n\nItems may be returned within 30 days.\n\n## Refunds\n\nRefunds in 5 days.\n",
    )
    first = parse_converted(
        rt, ParseInput(document_id="d1", execution="r1", strategy=llm, batch_count=0)
    )

    def commit(run_id: str, sections: int) -> list[dict[str, Any]]:
        for index in range(sections):
            item = SectionItem(document_id="d1", strategy=llm, run_id=run_id, index=index)
            plan_one_section(rt, PlanSectionInput(input=item))
        prepared = prepare_plan(
            rt, PrepareInput(document_id="d1", strategy=llm, run_id=run_id, section_count=sections)
        )
        for index in range(prepared.range_count):
            item = RangeItem(document_id="d1", version=prepared.version, index=index)
            index_range(rt, IndexInput(input=item))
        return [c for c in opensearch.chunks("d1") if c["plan_version"] == str(prepared.version)]

    v1 = commit(first.run_id, first.section_count)
    assert len(model.calls) == 1 and v1 and all(not c.get("meta") for c in v1)
    rt.registry.update("d1", metadata={"dept": "legal", "year": 2024})  # late metadata stored
    again = section_document(rt, SectionInput(document_id="d1", strategy=llm, run_id="meta-run"))
    v2 = commit("meta-run", again.section_count)
    assert len(model.calls) == 1  # every section plan came from the cache
    assert sorted(c["text"] for c in v2) == sorted(c["text"] for c in v1)
    assert all(
        c["meta"] == [{"key": "dept", "keyword": "legal"}, {"key": "year", "number": 2024}]
        for c in v2
    )
