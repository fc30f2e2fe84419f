"""The local pipeline on a real workspace: ingest, re-ingest, bad input, replan, atomicity."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from drac.errors import DracError
from drac.local import Workspace
from drac.local.fts_index import FtsChunkIndex
from drac.local.inputs import collect_inputs
from drac.local.outcome import Outcome
from drac.local.pipeline import IngestSettings, ingest_file, replan_document
from drac.models import DocumentStatus, Strategy
from drac.strategies import resolve_strategy

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "markdown"


@pytest.fixture
def workspace(tmp_path: Path):
    ws = Workspace(tmp_path / "ws")
    yield ws
    ws.close()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    shutil.copytree(FIXTURES, folder)
    return folder


def ingest_all(paths: list[Path], workspace: Workspace, **settings) -> list[Outcome]:
    files, missing = collect_inputs(paths)
    ingest_settings = IngestSettings(**settings)
    return missing + [ingest_file(path, workspace, ingest_settings) for path in files]


def assert_consistent(workspace: Workspace) -> None:
    """Active chunks cover every content element of every live document exactly once."""
    for record in workspace.documents():
        chunks = workspace.active_chunks(record.document_id)
        if record.status not in (DocumentStatus.INDEXED, DocumentStatus.PARTIAL):
            assert chunks == []
            continue
        elements = workspace.get_elements(record.document_id)
        content = [e.id for e in elements if not e.is_heading]
        used = [i for c in chunks for i in c.element_ids if i in set(content)]
        assert sorted(used) == sorted(content)
        assert {c.plan_version for c in chunks} == {record.active_version}
        plan = workspace.plans.get_plan(record.document_id, record.active_version or 0)
        limit = plan.strategy.hard_limit_chars
        assert all(len(c.text) <= limit for c in chunks)
        indexed = workspace.db.query(
            "SELECT COUNT(*) AS n FROM bm25_docs JOIN chunks USING (chunk_id)"
            " WHERE chunks.document_id = ?",
            (record.document_id,),
        )[0]["n"]
        assert indexed == len(chunks)
    orphans = workspace.db.query(
        "SELECT COUNT(*) AS n FROM bm25_postings"
        " WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)"
    )[0]["n"]
    assert orphans == 0


def test_ingest_a_folder_of_markdown(workspace: Workspace, docs: Path) -> None:
    outcomes = ingest_all([docs], workspace)
    assert sorted(Path(o.path).name for o in outcomes) == sorted(
        p.name for p in FIXTURES.glob("*.md")
    )
    assert all(o.status == "INDEXED" and o.chunks > 0 and o.plan_version == 1 for o in outcomes)
    assert_consistent(workspace)
    for chunk in workspace.active_chunks():
        body = chunk.text.removeprefix(chunk.breadcrumb + "\n\n")
        source = (docs / chunk.source).read_text("utf-8")
        assert all(line in source for line in body.splitlines())
    record = workspace.find_document("baggage_allowance.md")
    assert workspace.get_markdown(record.document_id) == (docs / "baggage_allowance.md").read_text()
    assert workspace.get_sections(record.document_id)


def test_reingest_is_unchanged(workspace: Workspace, docs: Path) -> None:
    first = ingest_all([docs], workspace)
    chunks = workspace.active_chunks()
    second = ingest_all([docs], workspace)
    assert {o.status for o in second} == {"UNCHANGED"}
    assert [o.chunks for o in second] == [o.chunks for o in first]
    assert workspace.active_chunks() == chunks
    assert all(workspace.plans.latest_version(o.document_id or "") == 1 for o in second)


def test_changed_file_replaces_old_document_only_after_success(
    workspace: Workspace, tmp_path: Path
) -> None:
    path = tmp_path / "policy.md"
    path.write_text("# Policy\n\nOriginal rule text.\n")
    old = ingest_file(path, workspace, IngestSettings())
    assert old.status == "INDEXED"

    path.write_bytes(b"")  # a failed new version must not retire the old one
    failed = ingest_file(path, workspace, IngestSettings())
    assert failed.status == "FAILED"
    assert workspace.get_document(old.document_id or "").status is DocumentStatus.INDEXED
    assert workspace.active_chunks(old.document_id)

    path.write_text("# Policy\n\nAmended rule text.\n")
    new = ingest_file(path, workspace, IngestSettings())
    assert new.status == "INDEXED" and new.document_id != old.document_id
    assert workspace.get_document(old.document_id or "").status is DocumentStatus.DELETED
    assert workspace.active_chunks(old.document_id) == []
    texts = [c.text for c in workspace.active_chunks()]
    assert texts == ["Policy\n\nAmended rule text."]
    assert_consistent(workspace)


def test_bad_inputs_fail_with_one_line_reasons_and_others_still_ingest(
    workspace: Workspace, docs: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "empty.md").write_bytes(b"")
    (bad / "junk.md").write_bytes(bytes(range(256)) * 20)
    (bad / "latin1.md").write_bytes("# Café\n\nCrème brûlée.\n".encode("latin-1"))
    (bad / "headings_only.md").write_text("# Only\n## Headings\n")
    paths = [
        bad / "empty.md",
        bad / "junk.md",
        docs / "audio_catalog.md",
        bad / "latin1.md",
        tmp_path / "does-not-exist.md",
        bad / "headings_only.md",
        docs / "baggage_allowance.md",
    ]
    outcomes = {Path(o.path).name: o for o in ingest_all(paths, workspace)}
    assert outcomes["audio_catalog.md"].status == "INDEXED"
    assert outcomes["baggage_allowance.md"].status == "INDEXED"
    for name in ("empty.md", "junk.md", "latin1.md", "does-not-exist.md", "headings_only.md"):
        outcome = outcomes[name]
        assert outcome.status == "FAILED", name
        assert outcome.failed
        assert outcome.error and "\n" not in outcome.error, name
    assert "empty" in (outcomes["empty.md"].error or "")
    assert "UTF-8" in (outcomes["latin1.md"].error or "")
    assert "no such file" in (outcomes["does-not-exist.md"].error or "").lower()
    failed = [d for d in workspace.documents() if d.status is DocumentStatus.FAILED]
    assert len(failed) == 4 and all(d.error for d in failed)
    assert_consistent(workspace)


def test_a_folder_given_as_a_file_and_hidden_files(workspace: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    (folder / ".hidden").mkdir(parents=True)
    (folder / ".hidden" / "secret.md").write_text("# S\n\nhidden\n")
    (folder / "notes.md").write_text("# N\n\nvisible\n")
    (folder / "image.bin").write_bytes(b"\x00")
    files, missing = collect_inputs([folder, folder / "notes.md"])
    assert files == [folder / "notes.md"] and missing == []
    outcome = ingest_file(folder, workspace, IngestSettings())
    assert outcome.status == "FAILED" and "folder" in (outcome.error or "")


def test_replan_makes_a_new_active_version_without_reading_sources(
    workspace: Workspace, docs: Path
) -> None:
    ingest_all([docs], workspace)
    record = workspace.find_document("baggage_allowance.md")
    v1_chunks = workspace.active_chunks(record.document_id)
    shutil.rmtree(docs)  # sources are gone: replan must not need them

    fine = resolve_strategy("fine", target_chars=400, min_chars=100)
    outcome = replan_document(record, workspace, fine)
    assert outcome.plan_version == 2
    record = workspace.get_document(record.document_id)
    assert record is not None and record.active_version == 2
    v2_chunks = workspace.active_chunks(record.document_id)
    assert {c.plan_version for c in v2_chunks} == {2}
    assert len(v2_chunks) > len(v1_chunks)
    v1 = workspace.plans.get_plan(record.document_id, 1)
    v2 = workspace.plans.get_plan(record.document_id, 2)
    assert v1.strategy.target_chars == Strategy().target_chars
    assert v2.strategy == fine
    assert [row["version"] for row in workspace.plans.versions(record.document_id)] == [1, 2]
    assert (workspace.root / "documents" / record.document_id / "plans" / "v0002.json").exists()
    assert_consistent(workspace)


def test_replan_below_the_largest_element_is_refused_and_changes_nothing(
    workspace: Workspace, tmp_path: Path
) -> None:
    path = tmp_path / "big.md"
    path.write_text("# Big\n\n" + "A long sentence of words. " * 60 + "\n")
    ingest_file(path, workspace, IngestSettings())
    record = workspace.find_document("big.md")
    before = workspace.active_chunks()
    tiny = Strategy(target_chars=100, min_chars=0, hard_limit_chars=200)
    with pytest.raises(DracError, match="hard limit"):
        replan_document(record, workspace, tiny)
    assert workspace.active_chunks() == before
    assert workspace.plans.latest_version(record.document_id) == 1


def test_crash_during_replan_leaves_the_previous_state_intact(
    workspace: Workspace, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_all([docs], workspace)
    record = workspace.find_document("baggage_allowance.md")
    before_chunks = workspace.active_chunks()
    before_record = workspace.get_document(record.document_id)
    original_upsert = FtsChunkIndex.upsert

    def crash(self, chunks, vectors=None):
        original_upsert(self, chunks[:1], vectors)  # half the work is done, then the crash
        raise OSError("disk full")

    monkeypatch.setattr(FtsChunkIndex, "upsert", crash)
    with pytest.raises(OSError, match="disk full"):
        replan_document(record, workspace, resolve_strategy("fine"))
    monkeypatch.undo()

    assert workspace.active_chunks() == before_chunks
    after = workspace.get_document(record.document_id)
    assert after == before_record and after is not None and after.active_version == 1
    assert workspace.plans.latest_version(record.document_id) == 1
    assert_consistent(workspace)
    # the database is usable and a later replan succeeds as version 2
    assert replan_document(record, workspace, resolve_strategy("fine")).plan_version == 2
    assert_consistent(workspace)


def test_crash_during_ingest_commit_leaves_nothing_half_done(
    workspace: Workspace, docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_all([docs / "audio_catalog.md"], workspace)
    before = workspace.active_chunks()

    def crash(self, chunks, vectors=None):
        raise RuntimeError("power cut")

    monkeypatch.setattr(FtsChunkIndex, "upsert", crash)
    outcome = ingest_file(docs / "baggage_allowance.md", workspace, IngestSettings())
    monkeypatch.undo()
    assert outcome.status == "FAILED" and "power cut" in (outcome.error or "")
    assert workspace.active_chunks() == before
    record = workspace.get_document(outcome.document_id or "")
    assert record is not None and record.status is DocumentStatus.FAILED
    assert workspace.plans.latest_version(outcome.document_id or "") == 0
    # a retry succeeds once the fault is gone
    again = ingest_file(docs / "baggage_allowance.md", workspace, IngestSettings())
    assert again.status == "INDEXED" and again.plan_version == 1
    assert_consistent(workspace)


def test_workspace_database_is_sqlite_with_integrity(workspace: Workspace, docs: Path) -> None:
    ingest_all([docs], workspace)
    connection = sqlite3.connect(workspace.root / "drac.sqlite")
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        count = connection.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    finally:
        connection.close()
    assert count == len(workspace.active_chunks())


def test_bm25_search_finds_a_chunk_by_words(workspace: Workspace, docs: Path) -> None:
    ingest_all([docs], workspace)
    hits = workspace.index.search("checked baggage total allowance kg", k=3)
    assert hits and hits[0].chunk.source == "baggage_allowance.md"
    assert "Checked Baggage" in hits[0].chunk.text or "Checked Baggage" in hits[0].chunk.breadcrumb
    assert hits[0].score >= hits[-1].score
    headphones = workspace.index.search("Planar Magnetic headphones", k=1)
    assert headphones[0].chunk.source == "audio_catalog.md"
    # query syntax of any kind is just words
    odd = workspace.index.search('baggage* ^"(')
    assert odd and odd[0].chunk.source == "baggage_allowance.md"
    assert workspace.index.search("") == []
    assert workspace.index.search("zzzqqqnotaword") == []
    assert workspace.active_chunks()  # the odd query above did no harm


def test_tenant_changes_the_document_id(workspace: Workspace, docs: Path) -> None:
    path = docs / "audio_catalog.md"
    plain = ingest_file(path, workspace, IngestSettings())
    tenant = ingest_file(path, workspace, IngestSettings(tenant="acme"))
    assert plain.document_id != tenant.document_id
    assert {c.tenant for c in workspace.active_chunks(tenant.document_id)} == {"acme"}


def test_no_chunk_exceeds_the_hard_limit_even_with_a_very_wide_table(
    workspace: Workspace, tmp_path: Path
) -> None:
    names = [f"Column name number {i} with more words" for i in range(40)]
    table = "| " + " | ".join(names) + " |\n|" + "---|" * 40 + "\n"
    table += "".join(
        "| " + " | ".join(f"{r * 100 + i} value" for i in range(40)) + " |\n" for r in range(5)
    )
    path = tmp_path / "wide.md"
    path.write_text("# Wide\n\n" + table)
    for preset in ("default", "fine", "coarse"):
        strategy = resolve_strategy(preset)
        outcome = ingest_file(path, workspace, IngestSettings(strategy=strategy, force=True))
        assert outcome.status == "INDEXED", outcome.error
        chunks = workspace.active_chunks(outcome.document_id)
        assert max(len(c.text) for c in chunks) <= strategy.hard_limit_chars, preset
        record = workspace.find_document(outcome.document_id or "")
        replan_document(record, workspace, strategy)  # the same limit is accepted on replan


def test_crash_while_replacing_a_changed_file_keeps_the_old_document_live(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "policy.md"
    path.write_text("# Policy\n\nOriginal rule text.\n")
    old = ingest_file(path, workspace, IngestSettings())
    before = workspace.active_chunks()
    path.write_text("# Policy\n\nAmended rule text.\n")

    def crash(self, document_id, plan_version=None):
        raise RuntimeError("killed mid-commit")

    monkeypatch.setattr(FtsChunkIndex, "delete", crash)
    new = ingest_file(path, workspace, IngestSettings())
    monkeypatch.undo()
    assert new.status == "FAILED"
    assert workspace.active_chunks() == before
    old_record = workspace.get_document(old.document_id or "")
    assert old_record is not None and old_record.status is DocumentStatus.INDEXED
    assert workspace.get_elements(new.document_id or "") == []
    assert_consistent(workspace)
