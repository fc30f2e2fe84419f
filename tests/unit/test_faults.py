"""Faults injected into a re-plan's commit, at every write and every bulk position, in both
runtimes: afterwards the index holds exactly the active plan version's chunks.

Local: the commit runs in one SQLite transaction, so a fault anywhere rolls it all back. Cloud:
the commit is the plan machine's Prepare, IndexChunks (per range) and Activate steps; a failed
step after Prepare is caught and Abandon deletes the version's chunks, as the ASL does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from drac.commit import commit_plan, plan_chunks
from drac.ingest import parse_document
from drac.models import Chunk, DocumentRecord, DocumentStatus, PlanVersion, Strategy
from drac.planning import plan_document

MARKDOWN = "# Guide\n\n" + "\n\n".join(
    f"## Part {n}\n\n" + " ".join(f"Sentence {n}.{i} about part {n}." for i in range(40))
    for n in range(1, 9)
)


class Fault(Exception):
    """The injected crash."""


def _plans(record: DocumentRecord) -> tuple[tuple[PlanVersion, list[Chunk]], ...]:
    out = []
    for version, target in ((1, 1100), (2, 300)):
        strategy = Strategy(target_chars=target, min_chars=min(700, target))
        parsed = parse_document(MARKDOWN, strategy)
        plan = plan_document(record.document_id, parsed.elements, parsed.sections, strategy,
                             version=version)
        out.append((plan, plan_chunks(record, parsed.elements, plan, strategy)))
    return tuple(out)


class Counting:
    """Wraps methods of some objects: counts the calls, raises Fault on call number `at`."""

    def __init__(self, at: int | None) -> None:
        self.at = at
        self.count = 0

    def wrap(self, target: Any, *names: str) -> None:
        for name in names:
            original = getattr(target, name)

            def counted(*args: Any, _original: Callable[..., Any] = original,
                        **kwargs: Any) -> Any:
                self.count += 1
                if self.count == self.at:
                    raise Fault(f"crash before write {self.count}")
                return _original(*args, **kwargs)

            setattr(target, name, counted)


# --- local ---------------------------------------------------------------------------------


def _local(tmp_path: Path, at: int | None) -> tuple[int, list[tuple[str, int]], int | None]:
    from drac.local import Workspace

    ws = Workspace(tmp_path / f"ws-{at}")
    record = DocumentRecord(document_id="d1", source="guide.md", sha256="0" * 64, owner="run")
    ws.registry.put(record)
    (plan1, chunks1), (plan2, chunks2) = _plans(record)
    commit_plan(ws.registry, ws.plans, ws.index, plan1, chunks1, DocumentStatus.INDEXED,
                owner="run")
    faults = Counting(at)
    faults.wrap(ws.index, "upsert", "delete", "delete_other_versions")
    faults.wrap(ws.registry, "activate", "put")
    faults.wrap(ws.plans, "save_plan")
    with contextlib.suppress(Fault):
        ws.commit_plan(plan2, chunks2)
    stored = ws.index.stored_chunks()
    active = ws.registry.get("d1").active_version  # type: ignore[union-attr]
    ws.close()
    return faults.count, stored, active


def test_local_commit_crashing_at_any_write_leaves_the_active_version_only(
    tmp_path: Path,
) -> None:
    writes, _, active = _local(tmp_path, None)
    assert active == 2 and writes >= 3
    for at in range(1, writes + 1):
        _, stored, active = _local(tmp_path, at)
        assert active == 1, at
        assert {version for _, version in stored} == {1}, at


# --- cloud ---------------------------------------------------------------------------------


def _cloud_commit(base: Any, opensearch: Any, at: int | None, fail_bulk_after: int | None,
                  monkeypatch: pytest.MonkeyPatch) -> tuple[int, int | None]:
    """Run a re-plan's commit as the plan machine does, with a fault; return the number of
    writes counted and the active version after recovery."""
    import boto3

    import drac.aws.stages.commit as stages
    from drac.aws.errors import TransientError
    from drac.aws.runtime import Runtime
    from drac.aws.stages.commit import (
        AbandonInput,
        ActivateInput,
        IndexInput,
        PrepareInput,
        RangeItem,
        abandon_version,
        activate_version,
        index_range,
        prepare_plan,
    )

    faults = Counting(at)
    writes = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "PutObject"}

    def before_call(model: Any, **kwargs: Any) -> None:
        if model.name in writes:
            faults.count += 1
            if faults.count == faults.at:
                raise Fault(f"crash before {model.name} (write {faults.count})")

    # a session of its own, hooked before any client exists (clients copy the hooks)
    session = boto3.session.Session(region_name=base.resources.region)
    session.events.register("before-call.*.*", before_call)
    rt = Runtime(base.resources, base.settings, session, opensearch_client=opensearch)
    rt._clients["bedrock-runtime"] = base._clients["bedrock-runtime"]
    faults.wrap(opensearch, "bulk")
    opensearch.fail_bulk_after = fail_bulk_after
    opensearch.index_actions = 0
    monkeypatch.setattr(stages, "RANGE_SIZE", 4)  # several ranges: faults between them
    prepared = None
    try:
        prepared = prepare_plan(rt, PrepareInput(document_id="d1", strategy=Strategy(
            target_chars=300, min_chars=300), run_id="r2", section_count=1))
        for index in range(prepared.range_count):
            item = RangeItem(document_id="d1", version=prepared.version, index=index)
            for _attempt in range(3):  # Step Functions retries TransientError
                try:
                    index_range(rt, IndexInput(input=item))
                    break
                except TransientError:
                    continue
            else:
                raise Fault("retries exhausted")
        activate_version(rt, ActivateInput(document_id="d1", version=prepared.version,
                                           mode="replan"))
    except Exception:  # the ASL catches every error after Prepare and abandons the version
        if at is None and fail_bulk_after is None:
            raise  # a clean run must not fail
        if prepared is not None:
            opensearch.fail_bulk_after = None
            faults.at = None
            abandon_version(rt, AbandonInput(document_id="d1", version=prepared.version))
    finally:
        opensearch.fail_bulk_after = None
        opensearch.bulk = type(opensearch).bulk.__get__(opensearch)
    record = rt.registry.get("d1")
    return faults.count, record.active_version if record else None


def _seed_cloud(rt: Any) -> list[Chunk]:
    """d1 live with version 1 indexed, and a stored section plan for the re-plan."""
    from drac.aws import keys
    from drac.aws.stages.planning import store_sections
    from drac.commit import index_chunks
    from drac.planning import plan_section
    from tests.fakes import FakeBedrockRuntime

    rt._clients["bedrock-runtime"] = FakeBedrockRuntime(None, "google.gemma-3-27b-it")
    record = DocumentRecord(document_id="d1", source="guide.md", sha256="0" * 64, owner="run")
    rt.registry.put(record)
    (plan1, chunks1), _ = _plans(record)
    strategy = Strategy(target_chars=300, min_chars=300)
    parsed = parse_document(MARKDOWN, strategy)
    rt.elements.put_elements("d1", parsed.elements)
    rt.plans.save_plan(plan1)
    index_chunks(rt.index(), chunks1)
    assert rt.registry.activate("d1", 1, DocumentStatus.INDEXED, owner="run")
    sections = parsed.sections[:1]
    store_sections(rt, "d1", "r2", sections, parsed.elements)
    plan = plan_section(sections[0], parsed.elements, strategy)
    rt.artifacts.put_text(keys.section_plan_key("d1", "r2", 0), plan.model_dump_json())
    return chunks1


def _reset(rt: Any, opensearch: Any) -> None:
    """Back to d1 live at version 1, nothing of version 2 anywhere."""
    opensearch.docs.clear()
    rt.registry.table.delete_item(Key={"document_id": "d1"})
    for version in (1, 2):
        rt.plans.table.delete_item(Key={"document_id": "d1", "version": version})
    _seed_cloud(rt)


def _check(rt: Any, opensearch: Any, active: int | None, label: str) -> None:
    stored = {(d["document_id"], int(d["plan_version"])) for d in opensearch.docs}
    assert stored == {("d1", active)}, label
    expected = {c.chunk_id for c in _active_chunks(rt, active)}
    assert sorted(d["chunk_id"] for d in opensearch.docs) == sorted(expected), label


def _active_chunks(rt: Any, version: int | None) -> list[Chunk]:
    record = rt.registry.get("d1")
    plan = rt.plans.get_plan("d1", version)
    return plan_chunks(record, rt.elements.get_elements("d1"), plan, plan.strategy)


@pytest.mark.slow
def test_cloud_commit_crashing_at_any_write_leaves_the_active_version_only(
    cloud: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, opensearch = cloud
    _seed_cloud(rt)
    # a clean run, to count its writes; then roll the document back to version 1
    writes, active = _cloud_commit(rt, opensearch, None, None, monkeypatch)
    assert active == 2 and writes >= 8
    _check(rt, opensearch, 2, "clean")
    for at in range(1, writes + 1):
        _reset(rt, opensearch)
        _, active = _cloud_commit(rt, opensearch, at, None, monkeypatch)
        _check(rt, opensearch, active, f"crash at write {at}")


@pytest.mark.slow
def test_cloud_bulk_failing_at_every_position(
    cloud: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, opensearch = cloud
    _seed_cloud(rt)
    _cloud_commit(rt, opensearch, None, None, monkeypatch)
    chunks = len(opensearch.docs)
    for position in range(chunks):
        _reset(rt, opensearch)
        _, active = _cloud_commit(rt, opensearch, None, position, monkeypatch)
        _check(rt, opensearch, active, f"bulk failing from chunk {position}")
        assert active == 1, "a bulk failing for good is abandoned"
