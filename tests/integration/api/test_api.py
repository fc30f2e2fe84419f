"""The Python API on small real files: each document's outcome, chunks exactly as `drac
export` writes them, search hits with filters, re-plan, remove, and which workspace it opens."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_paths import CLOUDWAY, require

import drac
from drac.api import IngestReport, Workspace
from drac.cli import _register_commands, cli
from drac.errors import FilterError, WorkspaceError
from drac.local.errors import UntrustedWorkspaceError

_register_commands()

CORPUS_FILES = ("Delayed Baggage.md", "Cancel Your Booking.md", "Airbus A380.md")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """Three corpus documents, a sidecar for one, a fake PDF and a link to skip."""
    source = require(CLOUDWAY / "md")
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in CORPUS_FILES:
        shutil.copy(source / name, folder / name)
    sidecar = {"metadataAttributes": {"dept": "baggage", "year": 2024}}
    (folder / "Delayed Baggage.md.metadata.json").write_text(json.dumps(sidecar))
    (folder / "broken.pdf").write_bytes(b"not a pdf at all\x00\x01")
    (folder / "link.md").symlink_to(source / "Web Check-In Guide.md")
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    with Workspace.open(tmp_path / "kb") as workspace:
        yield workspace


def test_ingest_reports_each_documents_outcome(ws: Workspace, docs: Path) -> None:
    report = ws.ingest(docs, metadata={"team": "ops"})
    assert isinstance(report, IngestReport)
    by_name = {Path(o.path).name: o for o in report.outcomes}
    assert set(by_name) == {*CORPUS_FILES, "broken.pdf"}
    for name in CORPUS_FILES:
        assert by_name[name].status == "INDEXED", by_name[name].error
        assert by_name[name].chunks > 0 and by_name[name].plan_version == 1
    assert by_name["broken.pdf"].failed and "not a PDF" in (by_name["broken.pdf"].error or "")
    assert [Path(o.path).name for o in report.failed] == ["broken.pdf"]
    skipped = {Path(s.path).name: s.reason for s in report.skipped}
    assert "symbolic link" in skipped["link.md"]
    assert "sidecar" in skipped["Delayed Baggage.md.metadata.json"]
    assert report.to_dict()["failed"] == 1

    again = ws.ingest(docs / "Delayed Baggage.md", metadata={"team": "ops"})
    assert [o.status for o in again.outcomes] == ["UNCHANGED"]
    assert again.ok


def test_chunks_are_exactly_what_drac_export_writes(ws: Workspace, docs: Path) -> None:
    ws.ingest([docs / name for name in CORPUS_FILES])
    views = list(ws.chunks())
    result = CliRunner().invoke(cli, ["export", "--workspace", str(ws.root)])
    assert result.exit_code == 0, result.output
    exported = [json.loads(line) for line in result.stdout.splitlines()]
    assert [v.to_dict() for v in views] == exported
    assert [v.text for v in views] == [line["text"] for line in exported]
    baggage = [v for v in views if v.source == "Delayed Baggage.md"]
    assert baggage and all(v.metadata == {"dept": "baggage", "year": 2024} for v in baggage)
    assert list(ws.chunks("Delayed Baggage.md")) == baggage
    first = baggage[0]
    assert ws.chunk(first.chunk_id) == first
    assert ws.chunk(first.chunk_id + "x") is None
    source = (docs / "Delayed Baggage.md").read_text()
    body = first.text.split("\n\n", 1)[1] if first.breadcrumb else first.text
    assert body.split("\n\n")[0] in source  # verbatim


def test_search_returns_hits_and_applies_filters(ws: Workspace, docs: Path) -> None:
    ws.ingest([docs / name for name in CORPUS_FILES])
    results = ws.search("delayed baggage property irregularity report", k=3)
    assert results.mode is drac.Mode.BM25  # no embedder in the tests
    assert 0 < len(results) <= 3
    top = results[0]
    assert top.source == "Delayed Baggage.md" and top.rank == 1
    assert top.chunk_id.startswith(top.document_id) and top.pages == (1,)
    assert top.score >= results[-1].score
    assert top.metadata == {"dept": "baggage", "year": 2024}
    assert "Property Irregularity Report" in top.text

    for filters in (
        "dept=baggage",
        ["year>=2024"],
        {"equals": {"key": "dept", "value": "baggage"}},
    ):
        hits = ws.search("CloudWay 24", k=10, filters=filters)
        assert hits and {hit.source for hit in hits} == {"Delayed Baggage.md"}
    assert len(ws.search("CloudWay 24", k=10)) > 3
    assert len(ws.search("CloudWay 24", k=10, filters="year<2024")) == 0
    assert ws.search("cancel your booking", k=1)[0].source == "Cancel Your Booking.md"
    with pytest.raises(FilterError):
        ws.search("x", filters="year>>")
    with pytest.raises(ValueError, match="needs an embedder"):
        ws.search("x", mode="dense")


def test_replan_makes_a_new_version_and_remembers_the_strategy(ws: Workspace, docs: Path) -> None:
    ws.ingest([docs / name for name in CORPUS_FILES])
    before = {v.document_id: v for v in ws.chunks()}
    report = ws.replan(strategy="fine")
    assert report.ok and len(report.outcomes) == 3
    assert {o.plan_version for o in report.outcomes} == {2}
    after = list(ws.chunks())
    assert {v.plan_version for v in after} == {2}
    assert len(after) > len(before)  # fine: smaller chunks
    status = ws.status()
    assert status.strategy.name == "fine" and status.strategy_remembered
    counts = {s.record.source: s.chunks for s in status.documents}
    assert sum(counts.values()) == len(after)
    shown = CliRunner().invoke(cli, ["status", "--json", "--workspace", str(ws.root)])
    assert [s.to_dict() for s in status.documents] == json.loads(shown.stdout)

    one = ws.replan(["Airbus A380.md"], strategy="coarse")
    assert [o.plan_version for o in one.outcomes] == [3]
    assert ws.status().strategy.name == "fine"  # a re-plan of named documents is not remembered


def test_remove_takes_a_document_out_of_search(ws: Workspace, docs: Path) -> None:
    ws.ingest([docs / name for name in CORPUS_FILES])
    removed = ws.remove(str(docs / "Cancel Your Booking.md"), "no-such-document")
    assert removed[0].retired is not None and removed[0].error is None
    assert removed[1].document_id is None and removed[1].error
    assert all(hit.source != "Cancel Your Booking.md" for hit in ws.search("cancel booking", 10))
    assert {v.source for v in ws.chunks()} == {"Delayed Baggage.md", "Airbus A380.md"}
    assert ws.status().counts() == {"INDEXED": 2, "DELETED": 1}


def test_open_trusts_a_named_path_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(WorkspaceError, match="no drac workspace"):
        Workspace.open(tmp_path / "missing", create=False)
    planted = tmp_path / "archive"
    planted.mkdir()
    Workspace.open(planted / ".drac").close()  # named: made and remembered
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other-user-state"))
    monkeypatch.chdir(planted)
    with pytest.raises(UntrustedWorkspaceError, match="did not make it"):
        Workspace.open()  # found by itself, made by someone else: refused
    with Workspace.open(planted / ".drac") as named:  # naming it is the user's decision
        assert named.root == planted / ".drac"
    with Workspace.open() as found:  # remembered since it was named
        assert found.root == Path(".drac")


def test_import_drac_stays_light() -> None:
    code = (
        "import sys, drac; light = not any(m in sys.modules for m in "
        "('drac.api', 'pydantic', 'drac.local')); ws = drac.Workspace; "
        "print(light, ws.__module__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    ).stdout.split()
    assert out == ["True", "drac.api.workspace"]
    with pytest.raises(AttributeError):
        _ = drac.NoSuchThing  # type: ignore[attr-defined]
