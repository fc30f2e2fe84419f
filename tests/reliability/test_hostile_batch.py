"""The whole hostile set in one `drac ingest` batch: each input gets its outcome, alone, named,
with its reason, and the good files among them are indexed all the same."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_files import HOSTILE_SET, Hostile, write_set

pytestmark = pytest.mark.libreoffice


def _drac(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from drac.cli import main; main()", *map(str, args)]
    # no embedder: these tests are about containment, and embedding the batch's large legal
    # documents on CPU took most of the fixture's minutes (search is BM25)
    env = {**os.environ, "DRAC_EMBEDDER": "none", "DRAC_EMBED_AT_INGEST": "0"}
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=900, env=env
    )


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Hostile], dict]:
    root = tmp_path_factory.mktemp("hostile")
    inputs = write_set(root / "inputs")
    run = _drac("ingest", root / "inputs", "-w", root / "ws", "--jobs", "2", "--json", cwd=root)
    assert run.returncode == 1, run.stderr[-3000:]  # some inputs fail, so exit 1
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    return root, inputs, json.loads(run.stdout)


def test_every_input_gets_its_expected_outcome(batch) -> None:
    _, inputs, report = batch
    outcomes = {Path(outcome["path"]).name: outcome for outcome in report["outcomes"]}
    assert set(outcomes) == set(inputs)
    wrong = {}
    for name, item in inputs.items():
        outcome = outcomes[name]
        said = outcome["error"] if outcome["status"] == "FAILED" else " | ".join(
            outcome["warnings"]
        )
        if outcome["status"] != item.status or not re.search(item.reason, said or ""):
            wrong[item.label] = (outcome["status"], said)
    assert not wrong, wrong
    assert report["failed"] == sum(item.status == "FAILED" for item in inputs.values())


def test_good_files_in_the_batch_are_searchable(batch) -> None:
    root, _, _ = batch
    run = _drac("search", "warranty claims", "-w", root / "ws", "--json", cwd=root)
    assert [hit["source"] for hit in json.loads(run.stdout)][:1] == ["good.pdf"]
    run = _drac("search", "Honest document text", "-w", root / "ws", "--json", cwd=root)
    assert "good.docx" in [hit["source"] for hit in json.loads(run.stdout)]


def test_status_shows_the_detected_format_of_failed_documents(batch) -> None:
    root, _, _ = batch
    run = _drac("status", "-w", root / "ws", "--json", cwd=root)
    formats = {record["source"]: (record["status"], record["format"]) for record in
               json.loads(run.stdout)}  # fmt: skip
    assert formats["corrupt.pdf"] == ("FAILED", "pdf")
    assert formats["encrypted.pdf"] == ("FAILED", "pdf")
    assert formats["bomb.docx"] == ("FAILED", "docx")
    assert formats["junk.pdf"] == ("FAILED", "unknown")  # random bytes: no format at all
    assert formats["scan.pdf"] == ("PARTIAL", "pdf")


def test_the_human_summary_survives_markup_and_names_every_failure(batch) -> None:
    root, _, _ = batch
    # a fresh workspace, so nothing is UNCHANGED; LibreOffice's successes add nothing here
    subset = tuple(item for item in HOSTILE_SET if item.status == "FAILED" or not item.libreoffice)
    inputs = write_set(root / "inputs-human", subset)
    run = _drac("ingest", root / "inputs-human", "-w", root / "ws-human", "--jobs", "2", cwd=root)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr and "MarkupError" not in run.stderr
    assert "drac summary" in run.stderr
    failed_lines = [line for line in run.stderr.splitlines() if line.startswith("FAILED ")]
    for name, item in inputs.items():
        if item.status == "FAILED":
            assert any(name in line for line in failed_lines), name
    assert "it holds [/])" in run.stderr  # the member name, printed as it is
    assert "'word/document.xml' is not well-formed" in run.stderr  # refused before LibreOffice
    assert "--model bedrock|openai --force" in run.stderr  # the scan hint


def test_status_and_show_print_markup_in_names_and_text_literally(batch) -> None:
    root, _, _ = batch
    status = _drac("status", "-w", root / "ws", cwd=root)
    assert status.returncode == 0, status.stderr
    assert "[bold]report[red].md" in status.stdout
    assert "caf\ufffd notes.md" in status.stdout
    show = _drac("show", "[bold]report[red].md", "-w", root / "ws", cwd=root)
    assert show.returncode == 0, show.stderr
    assert "[bold]report[red].md" in show.stdout
    search = _drac("search", "markup", "-w", root / "ws", cwd=root)
    assert "Text with [/] and [red]markup[/red]." in search.stdout
