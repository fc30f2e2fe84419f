"""The reference sanitizer parses every document LibreOffice will see, so it is bounded as
every other parser of untrusted input: its HTML, CSS and formula scanning is linear in the
input, and it runs in a contained worker whose CPU and memory limits fail a document alone,
before any work folder exists.

Before: a 240 KB page of 60,000 `url(` in a `<style>` took 5.6 s / 21 s / 57 s at 10,000 /
20,000 / 40,000 of them, and 100,000 unfinished `<a` grew quadratically in `html.parser`;
both ran in drac's own process with no limit.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pdfs import Text, make_pdf, text_page
from reliability.hostile_layer1 import ods_formula

from drac.documents.intake.normalise import convert_with_libreoffice
from drac.documents.sandbox import references
from drac.documents.sandbox.references import strip_external_references
from drac.errors import DocumentError

_PAGE = "<!DOCTYPE html><html><head><title>t</title></head><body><p>Honest.</p>{}</body></html>"
FAMILIES: dict[str, tuple[Callable[[int], bytes], str, int]] = {
    "url( in a style sheet": (
        lambda n: f"<html><head><style>{'url(' * n}</style></head><body>x</body></html>".encode(),
        ".html", 20_000,
    ),
    "url( in a style attribute": (
        lambda n: _PAGE.format(f'<p style="{"url(" * n}">x</p>').encode(), ".html", 20_000
    ),
    "unfinished <a": (lambda n: _PAGE.format("<a" * n).encode(), ".html", 50_000),
    "unfinished </a": (lambda n: _PAGE.format("</a" * n).encode(), ".html", 20_000),
    "unclosed <!--": (lambda n: _PAGE.format("<!--" * n).encode(), ".html", 50_000),
    "unclosed <!x": (lambda n: _PAGE.format("<!x" * n).encode(), ".html", 50_000),
    "unclosed quotes": (lambda n: _PAGE.format('<a x="' * n).encode(), ".html", 10_000),
    "end tags in a style": (
        lambda n: _PAGE.format("<style>" + "</style x" * n).encode(), ".html", 10_000
    ),
    "letters in an ODS formula": (
        lambda n: ods_formula("of:=" + "a" * n), ".ods", 20_000,
    ),
}  # fmt: skip
FLOOR_S = 0.02
"""Timings below this are noise on a loaded machine: the smaller input counts as this."""


def _cpu_seconds(data: bytes, suffix: str) -> float:
    """The least CPU time of three cleanings (this process's, so other jobs do not count)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        strip_external_references(data, suffix)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_cleaning_grows_linearly_with_the_input(family: str) -> None:
    """Ten times the input costs well under 25 times the CPU (quadratic would be 100)."""
    make, suffix, n = FAMILIES[family]
    small = _cpu_seconds(make(n), suffix)
    large = _cpu_seconds(make(10 * n), suffix)
    assert large < 25 * max(small, FLOOR_S), f"{small:.4f} s -> {large:.4f} s"


def test_the_issues_pages_are_cleaned_at_once() -> None:
    """The two pages of the report: 60,000 `url(` (240 KB) and 100,000 `<a` (200 KB)."""
    for data in (FAMILIES["url( in a style sheet"][0](60_000), b"<a" * 100_000):
        assert _cpu_seconds(data, ".html") < 1.0


def test_a_document_past_the_sanitizers_cpu_limit_fails_alone_and_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its CPU limit lowered to 1 s, a page that takes the sanitizer longer fails with
    the limit named, leaves nothing in TMPDIR, and the next document is cleaned as before."""
    work = tmp_path / "tmp"
    work.mkdir()
    monkeypatch.setenv("TMPDIR", str(work))
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    monkeypatch.setenv("DRAC_SOFFICE", "/bin/false")  # never reached
    low = dataclasses.replace(references.SANITIZER_LIMITS, cpu_s=1.0, step_cpu_s=1.0)
    monkeypatch.setattr(references, "SANITIZER_LIMITS", low)
    heavy = _PAGE.format("</a" * 5_000_000).encode()  # about 3 s of CPU
    with pytest.raises(DocumentError, match="used more than 1 s of CPU while removing external"):
        convert_with_libreoffice(heavy, ".html", "pdf")
    assert list(work.iterdir()) == []
    honest = references.remove_external_references(_PAGE.format("").encode(), ".html")
    assert b"Honest." in honest.data


def _drac(*args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from drac.cli import main; main()", *map(str, args)]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=600, env=env
    )


@pytest.mark.libreoffice
def test_the_issues_pages_beside_a_good_file_leave_it_indexed_and_no_work_folder(
    tmp_path: Path,
) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "styles.html").write_bytes(FAMILIES["url( in a style sheet"][0](60_000))
    (inputs / "anchors.html").write_bytes(b"<a" * 100_000)
    lines = [Text("Warranty claims are paid within thirty days.", 72, 700)]
    (inputs / "good.pdf").write_bytes(make_pdf([text_page(lines)]))
    work = tmp_path / "tmp"
    work.mkdir()
    env = {**os.environ, "TMPDIR": str(work), "DRAC_EMBEDDER": "none", "DRAC_EMBED_AT_INGEST": "0"}
    started = time.monotonic()
    run = _drac("ingest", inputs, "-w", tmp_path / "ws", "--json", cwd=tmp_path, env=env)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    outcomes = {Path(o["path"]).name: o for o in json.loads(run.stdout)["outcomes"]}
    assert outcomes["good.pdf"]["status"] == "INDEXED"
    assert set(outcomes) == {"good.pdf", "styles.html", "anchors.html"}
    assert time.monotonic() - started < 300
    assert [path.name for path in work.iterdir() if path.name.startswith("drac-lo-")] == []
