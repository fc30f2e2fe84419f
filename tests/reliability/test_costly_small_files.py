"""Small files that cost minutes of work, each bounded page by page, fail alone once their
document's CPU budget is used, with a reason naming it; a good document of the same run is
indexed (the files of RELIABILITY.md's "A document's CPU budget", scaled down, with the
budget set low through its setting)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_cost import many_frames_tiff, nested_tables_docx, tiny_image_pages_pdf
from hostile_pdf import many_pages_pdf

from drac.documents.pdf.ocr import ocr_available

pytestmark = pytest.mark.libreoffice

BUDGET_S = 5
"""Far below what each file costs in all (20 scanned pages: about 40 s of OCR; 100 frames:
about 29 s; the nested tables: about 60 s of LibreOffice), above the good PDF's 0.3 s and
the start of the workers it may need (about 0.5 s each)."""


def test_each_costly_small_file_fails_alone_naming_the_budget(tmp_path: Path) -> None:
    assert ocr_available(), "the OCR engine is installed by scripts/setup.sh (drac[ocr])"
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "tiny-image-pages.pdf").write_bytes(tiny_image_pages_pdf(20))
    (inputs / "many-frames.tif").write_bytes(many_frames_tiff(100))
    (inputs / "nested-tables.docx").write_bytes(nested_tables_docx(3000))
    (inputs / "good.pdf").write_bytes(many_pages_pdf(2, "Quarterly warranty claims", 300))
    (tmp_path / "tmp").mkdir()
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path / "tmp"),
        "DRAC_DOCUMENT_CPU_S": str(BUDGET_S),
        "DRAC_DOCUMENT_CPU_S_PER_MIB": "0",
        "DRAC_EMBEDDER": "none",
        "DRAC_EMBED_AT_INGEST": "0",
    }
    command = [sys.executable, "-c", "from drac.cli import main; main()", "ingest", str(inputs),
               "-w", str(tmp_path / "ws"), "--jobs", "2", "--json"]  # fmt: skip
    run = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env
    )
    assert run.returncode == 1, run.stderr[-3000:]  # some inputs fail
    outcomes = {Path(item["path"]).name: item for item in json.loads(run.stdout)["outcomes"]}
    assert outcomes["good.pdf"]["status"] == "INDEXED", outcomes
    assert outcomes["good.pdf"]["cpu_s"] < BUDGET_S, outcomes
    reasons = {}
    for name in ("tiny-image-pages.pdf", "many-frames.tif", "nested-tables.docx"):
        assert outcomes[name]["status"] == "FAILED", (name, outcomes[name])
        reasons[name] = outcomes[name]["error"]
        assert f"used its {BUDGET_S} s CPU budget" in reasons[name], reasons
        assert "DRAC_DOCUMENT_CPU_S" in reasons[name]
    # the step that used it is named: OCR of a page, or (on a loaded machine, where the workers'
    # start-up weighs more) the opening of the PDF that precedes it
    assert re.search(
        r"while (reading page \d+ by OCR|opening the PDF)", reasons["tiny-image-pages.pdf"]
    )
    assert "with LibreOffice" in reasons["nested-tables.docx"]
    assert not list((tmp_path / "tmp").glob("drac-lo-*")), "a LibreOffice work folder was left"
