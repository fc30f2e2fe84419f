"""Workspace adapters: atomic files, transactions, stores, plan cache and ledger with an LLM."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drac.errors import WorkspaceError
from drac.local import FileArtifactStore, Workspace
from drac.local.database import Database
from drac.local.files import write_atomic
from drac.local.pipeline import IngestSettings, ingest_file, replan_document
from drac.models import LedgerEntry, PlanVersion, SectionPlan, Strategy
from drac.parsing import parse_markdown
from drac.strategies import resolve_strategy

DOC = "# Topic\n\n" + "".join(f"Paragraph {i} about the topic.\n\n" for i in range(12))


@pytest.fixture
def workspace(tmp_path: Path):
    ws = Workspace(tmp_path / "ws")
    yield ws
    ws.close()


# --- files ----------------------------------------------------------------------------------


def test_write_atomic_replaces_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b.txt"
    write_atomic(path, b"one")
    write_atomic(path, b"two")
    assert path.read_bytes() == b"two"
    assert sorted(p.name for p in path.parent.iterdir()) == ["b.txt"]


def test_write_atomic_crash_keeps_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data.json"
    write_atomic(path, b"old")

    def crash(src, dst):
        raise OSError("crash before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        write_atomic(path, b"new")
    monkeypatch.undo()
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]


@pytest.mark.parametrize("key", ["", "/etc/passwd", "../outside", "a/../../b"])
def test_artifact_keys_cannot_escape_the_root(tmp_path: Path, key: str) -> None:
    store = FileArtifactStore(tmp_path)
    with pytest.raises(ValueError):
        store.put_bytes(key, b"x")


def test_artifact_store_round_trip_and_missing_key(tmp_path: Path) -> None:
    store = FileArtifactStore(tmp_path)
    store.put_text("documents/d1/document.md", "héllo")
    assert store.get_text("documents/d1/document.md") == "héllo"
    with pytest.raises(KeyError):
        store.get_bytes("documents/d1/missing")


# --- database -------------------------------------------------------------------------------


def test_nested_transaction_rolls_back_as_a_whole(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.sqlite")
    try:
        with pytest.raises(RuntimeError), db.transaction() as conn:
            conn.execute("INSERT INTO plan_cache (cache_key, data) VALUES ('a', '1')")
            with db.transaction() as inner:
                inner.execute("INSERT INTO plan_cache (cache_key, data) VALUES ('b', '2')")
            raise RuntimeError("boom")
        assert db.query("SELECT COUNT(*) AS n FROM plan_cache")[0]["n"] == 0
        with db.transaction() as conn:
            conn.execute("INSERT INTO plan_cache (cache_key, data) VALUES ('c', '3')")
        assert db.query("SELECT cache_key FROM plan_cache")[0]["cache_key"] == "c"
    finally:
        db.close()


def test_opening_a_missing_workspace_without_create_fails(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="no drac workspace"):
        Workspace(tmp_path / "nowhere", create=False)
    assert not (tmp_path / "nowhere").exists()


# --- stores ---------------------------------------------------------------------------------


def _plan(version: int) -> PlanVersion:
    return PlanVersion(
        document_id="d1",
        version=version,
        strategy=Strategy(),
        sections=(SectionPlan(section_id="s1", chunks=(("p1",),), planner="rules"),),
        created_at="2026-11-30T00:00:00Z",
    )


def test_plan_versions_are_kept_and_never_overwritten(workspace: Workspace) -> None:
    assert workspace.plans.latest_version("d1") == 0
    workspace.plans.save_plan(_plan(1))
    workspace.plans.save_plan(_plan(2))
    assert workspace.plans.latest_version("d1") == 2
    assert workspace.plans.get_plan("d1", 1) == _plan(1)
    with pytest.raises(Exception, match="UNIQUE"):
        workspace.plans.save_plan(_plan(2))
    with pytest.raises(KeyError):
        workspace.plans.get_plan("d1", 3)


def test_elements_round_trip_in_order(workspace: Workspace) -> None:
    elements = parse_markdown(DOC + "| a |\n|---|\n| 1 |\n")
    workspace.elements.put_elements("d1", elements)
    assert workspace.get_elements("d1") == elements
    workspace.elements.put_elements("d1", elements[:2])
    assert workspace.get_elements("d1") == elements[:2]


def test_ledger_entries_round_trip(workspace: Workspace) -> None:
    entry = LedgerEntry(document_id="d1", stage="planning", model="m", input_tokens=3)
    workspace.record(entry)
    assert workspace.ledger_entries() == [entry]


def test_find_document_by_name_prefix_and_ambiguity(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "same.md").write_text("# A\n\nfirst\n")
    (tmp_path / "b" / "same.md").write_text("# B\n\nsecond\n")
    first = ingest_file(tmp_path / "a" / "same.md", workspace, IngestSettings())
    ingest_file(tmp_path / "b" / "same.md", workspace, IngestSettings())
    assert workspace.find_document(first.document_id or "").document_id == first.document_id
    assert workspace.find_document((first.document_id or "")[:12]).source == "same.md"
    found = workspace.find_document(str((tmp_path / "a" / "same.md").resolve()))
    assert found.document_id == first.document_id
    with pytest.raises(WorkspaceError, match="matches 2 documents"):
        workspace.find_document("same.md")
    with pytest.raises(WorkspaceError, match="no document matches"):
        workspace.find_document("other.md")


# --- LLM planning through the workspace: ledger and plan cache ------------------------------


def _llm_answer(system: str, prompt: str) -> str:
    ids = [line.split()[0] for line in prompt.splitlines() if line.startswith("p")]
    return "```json\n" + str([ids[i : i + 4] for i in range(0, len(ids), 4)]).replace("'", '"')


def test_llm_ingest_records_ledger_and_replan_uses_the_cache(
    workspace: Workspace, tmp_path: Path, scripted_model
) -> None:
    path = tmp_path / "doc.md"
    path.write_text(DOC)
    model = scripted_model([_llm_answer])
    strategy = resolve_strategy("llm")
    outcome = ingest_file(path, workspace, IngestSettings(strategy=strategy), text_model=model)
    assert outcome.status == "INDEXED"
    assert len(model.calls) == 1
    entries = workspace.ledger_entries()
    assert [(e.stage, e.outcome, e.model) for e in entries] == [("planning", "ok", "fake-planner")]
    plan = workspace.plans.get_plan(outcome.document_id or "", 1)
    assert plan.sections[0].planner == "llm"
    assert plan.usage.output_tokens == entries[0].output_tokens > 0
    chunks = workspace.active_chunks()
    assert [len([i for i in c.element_ids if i.startswith("p")]) for c in chunks] == [4, 4, 4]

    record = workspace.find_document("doc.md")
    again = replan_document(record, workspace, strategy, text_model=model)
    assert again.plan_version == 2
    assert len(model.calls) == 1  # unchanged: served from the plan cache
    assert workspace.plans.get_plan(record.document_id, 2).sections[0].cached

    replan_document(record, workspace, resolve_strategy("llm", target_chars=900), text_model=model)
    assert len(model.calls) == 2  # a changed strategy asks the model again
    assert len(workspace.ledger_entries()) == 2


def test_llm_garbage_falls_back_and_ingest_still_succeeds(
    workspace: Workspace, tmp_path: Path, scripted_model
) -> None:
    path = tmp_path / "doc.md"
    path.write_text(DOC)
    model = scripted_model(["I'd rather not."])
    outcome = ingest_file(
        path, workspace, IngestSettings(strategy=resolve_strategy("llm")), text_model=model
    )
    assert outcome.status == "INDEXED"
    assert any("fell back to rules" in warning for warning in outcome.warnings)
    plan = workspace.plans.get_plan(outcome.document_id or "", 1)
    assert plan.sections[0].planner == "llm->rules"
    assert plan.sections[0].issues.fell_back_to_rules
    assert [e.outcome for e in workspace.ledger_entries()] == ["unparseable", "unparseable"]
    stored = workspace.plans.versions(outcome.document_id or "")
    assert stored[0]["planner"] == "llm->rules"
