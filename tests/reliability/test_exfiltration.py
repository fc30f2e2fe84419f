"""No document can make LibreOffice read another file or reach the network (issue 16,
findings 1 to 3): every probe is ingested, and no request reaches the test's listener, no
canary text reaches any artifact, no canary image reaches the stored PDF.

Each layer is also shown on its own: the reference sanitizer with no profile setting, and
each profile setting with the sanitizer off (SECURITY.md keeps the table).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile_links import (
    Canary,
    Listener,
    canary_images,
    docx_attached_template,
    docx_field,
    docx_linked_image,
    html_probes,
    listening,
    ods_external_formula,
    ods_table_source,
    pdf_text,
    pptx_hyperlink,
    pptx_linked_image,
    pptx_ole_link,
    write_canary,
)

from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import Converted, Defences, convert_with_libreoffice, normalise
from drac.documents.sandbox import lo_profile
from drac.documents.spreadsheets import SpreadsheetOptions, read_spreadsheet

pytestmark = pytest.mark.libreoffice

_HTML_NAMES = (
    "stylesheet", "css import", "css background", "inline style", "img", "srcset",
    "table background", "body background", "iframe", "object", "embed", "input image",
    "base and img", "meta refresh", "svg image", "video",
)  # fmt: skip


@dataclass(frozen=True)
class Probe:
    name: str
    data: bytes
    suffix: str


def _probes(canary: Canary, listener: Listener) -> list[Probe]:
    text_uri = canary.text_file.as_uri()
    relative = "../" * 12 + str(canary.text_file).lstrip("/")
    probes = [
        Probe("ole-file", pptx_ole_link(text_uri), ".pptx"),
        Probe("ole-file-manual", pptx_ole_link(text_uri, automatic=False), ".pptx"),
        Probe("ole-package", pptx_ole_link(text_uri, "Package"), ".pptx"),
        Probe("ole-relative", pptx_ole_link(relative), ".pptx"),
        Probe("ole-ods", pptx_ole_link(canary.ods_file.as_uri(), "Excel.Sheet.12"), ".pptx"),
        Probe("ole-http", pptx_ole_link(listener.url("/ole")), ".pptx"),
        Probe("pptx-image-http", pptx_linked_image(listener.url("/slide.png")), ".pptx"),
        Probe("pptx-image-file", pptx_linked_image(canary.png_file.as_uri()), ".pptx"),
        Probe("pptx-hyperlink", pptx_hyperlink(listener.url("/link")), ".pptx"),
        Probe("docx-image-http", docx_linked_image(listener.url("/word.png")), ".docx"),
        Probe("docx-image-file", docx_linked_image(canary.png_file.as_uri()), ".docx"),
        Probe("docx-template", docx_attached_template(listener.url("/t.dotx")), ".docx"),
        Probe(
            "docx-includetext",
            docx_field(f'INCLUDETEXT "{canary.text_file}"', simple=False),
            ".docx",
        ),
        Probe(
            "docx-includetext-simple",
            docx_field(f'INCLUDETEXT "{canary.text_file}"', simple=True),
            ".docx",
        ),
        Probe(
            "docx-includepicture",
            docx_field(f'INCLUDEPICTURE "{listener.url("/f.png")}"', simple=False),
            ".docx",
        ),
        Probe("ods-table-source", ods_table_source(canary.ods_file.as_uri()), ".ods"),
        Probe("ods-formula", ods_external_formula(canary.ods_file.as_uri()), ".ods"),
    ]
    urls = {name: listener.url(f"/{name.replace(' ', '-')}.png") for name in _HTML_NAMES}
    for name, data in html_probes(urls, canary.png_file).items():
        probes.append(Probe("html-" + name.replace(" ", "-"), data, ".html"))
    return probes


@pytest.fixture(scope="module")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Canary:
    return write_canary(tmp_path_factory.mktemp("canary"))


@pytest.fixture(scope="module")
def listener(canary: Canary) -> Iterator[Listener]:
    with listening(canary.token) as served:
        yield served


def _convert(probe: Probe, defences: Defences) -> Converted:
    return convert_with_libreoffice(
        probe.data, probe.suffix, "pdf", timeout_s=120, defences=defences
    )


def _leaks(probe: Probe, defences: Defences, canary: Canary, listener: Listener) -> list[str]:
    """What the probe got out of LibreOffice under `defences` (empty when nothing)."""
    before = len(listener.requests)
    pdf = _convert(probe, defences).data
    leaks = [f"request {request}" for request in listener.requests[before:]]
    if canary.token in pdf_text(pdf):
        leaks.append("canary text in the PDF")
    if canary_images(pdf):
        leaks.append("canary image in the PDF")
    return leaks


# --- all layers, the whole pipeline ---------------------------------------------------------


def _drac(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from drac.cli import main; main()", *map(str, args)]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=900
    )


@pytest.fixture(scope="module")
def ingested(
    tmp_path_factory: pytest.TempPathFactory, canary: Canary, listener: Listener
) -> tuple[Path, dict, list[str]]:
    root = tmp_path_factory.mktemp("exfiltration")
    inputs = root / "inputs"
    inputs.mkdir()
    for probe in _probes(canary, listener):
        (inputs / f"{probe.name}{probe.suffix}").write_bytes(probe.data)
    before = len(listener.requests)
    run = _drac("ingest", inputs, "-w", root / "ws", "--jobs", "2", "--json", cwd=root)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    return root, json.loads(run.stdout), listener.requests[before:]


def test_no_probe_reaches_the_listener(ingested) -> None:
    _, _, requests = ingested
    assert requests == []


def test_every_probe_is_ingested_with_a_warning_naming_what_was_removed(ingested) -> None:
    _, report, _ = ingested
    outcomes = {Path(o["path"]).name: o for o in report["outcomes"]}
    failed = {
        n: o["error"] for n, o in outcomes.items() if o["status"] not in ("INDEXED", "PARTIAL")
    }
    assert failed == {}
    unwarned = [
        name
        for name, outcome in outcomes.items()
        if not any("removed" in w and "external reference" in w for w in outcome["warnings"])
    ]
    assert unwarned == []


def test_no_artifact_holds_the_canary(ingested, canary: Canary) -> None:
    root, _, _ = ingested
    holding = [
        str(path.relative_to(root))
        for path in (root / "ws").rglob("*")
        if path.is_file() and canary.token.encode() in path.read_bytes()
    ]
    assert holding == []
    exported = _drac("export", "-w", root / "ws", cwd=root)
    assert exported.returncode == 0, exported.stderr[-2000:]
    assert exported.stdout.strip() and canary.token not in exported.stdout
    status = _drac("status", "-w", root / "ws", "--json", cwd=root)
    assert canary.token not in status.stdout


def test_no_stored_pdf_holds_canary_text_or_the_canary_image(ingested, canary: Canary) -> None:
    root, _, _ = ingested
    pdfs = list((root / "ws").rglob("normalised.pdf"))
    assert len(pdfs) >= 20
    bad = {}
    for path in pdfs:
        pdf = path.read_bytes()
        if canary.token in pdf_text(pdf) or canary_images(pdf):
            bad[str(path)] = "canary"
    assert bad == {}


def test_the_warning_reaches_status_and_show(ingested) -> None:
    root, _, _ = ingested
    status = json.loads(_drac("status", "-w", root / "ws", "--json", cwd=root).stdout)
    by_source = {record["source"]: record for record in status}
    record = by_source["ole-file.pptx"]
    assert any("1 linked object" in warning for warning in record["warnings"])
    shown = _drac("show", "ole-file.pptx", "-w", root / "ws", cwd=root)
    assert "removed 1 external reference" in shown.stdout + shown.stderr


def test_hyperlink_text_is_kept(ingested) -> None:
    root, _, _ = ingested
    exported = _drac("export", "-w", root / "ws", cwd=root).stdout
    assert "Visible link text" in exported
    assert "/link" not in exported


# --- each layer on its own ------------------------------------------------------------------


def test_the_sanitizer_alone_stops_every_probe(canary: Canary, listener: Listener) -> None:
    alone = Defences(strip_references=True, settings=())
    leaking = {}
    for probe in _probes(canary, listener):
        leaks = _leaks(probe, alone, canary, listener)
        if leaks:
            leaking[probe.name] = leaks
    assert leaking == {}


_UNDEFENDED_LEAKS = ("ole-file", "ole-relative", "ole-http", "pptx-image-http", "html-img")
"""Probes that leak with no defence at all on LibreOffice 7.4 (the findings reproduced)."""

_STOPPED_BY = {
    lo_profile.NO_NETWORK_PROVIDERS.name: (
        "ole-http", "pptx-image-http", "docx-image-http", "html-img", "html-stylesheet",
    ),
    lo_profile.DEAD_PROXY.name: (
        "ole-http", "pptx-image-http", "docx-image-http", "html-img", "html-stylesheet",
    ),
    lo_profile.BLOCK_UNTRUSTED_REFERER_LINKS.name: (
        "pptx-image-http", "docx-image-http", "html-img", "html-local-image-uri",
    ),
}  # fmt: skip
"""What each profile setting stops by itself, the sanitizer off (SECURITY.md)."""


def _probe(name: str, canary: Canary, listener: Listener) -> Probe:
    return next(probe for probe in _probes(canary, listener) if probe.name == name)


@pytest.mark.parametrize("name", _UNDEFENDED_LEAKS)
def test_without_any_defence_the_probe_leaks(name: str, canary: Canary, listener: Listener) -> None:
    """The findings, reproduced: what each layer below has to stop."""
    _leaks_unguarded(_probe(name, canary, listener), canary, listener)


_UNGUARDED: dict[str, list[str]] = {}


def _leaks_unguarded(probe: Probe, canary: Canary, listener: Listener) -> None:
    """Skip when the probe does not leak with neither sanitizer nor settings: then a layer
    outside these two (the containment of LibreOffice) already stops it. Run once per probe."""
    if probe.name not in _UNGUARDED:
        _UNGUARDED[probe.name] = _leaks(probe, Defences(False, ()), canary, listener)
    if not _UNGUARDED[probe.name]:
        pytest.skip(f"{probe.name} is stopped outside these layers (containment?)")


@pytest.mark.parametrize(
    ("setting", "name"),
    [(setting, name) for setting, names in _STOPPED_BY.items() for name in names],
)
def test_each_profile_setting_alone_stops_what_it_is_kept_for(
    setting: str, name: str, canary: Canary, listener: Listener
) -> None:
    [chosen] = [s for s in lo_profile.LINK_SETTINGS if s.name == setting]
    probe = _probe(name, canary, listener)
    _leaks_unguarded(probe, canary, listener)
    assert _leaks(probe, Defences(False, (chosen,)), canary, listener) == []


def test_no_profile_setting_stops_a_linked_object_reading_a_file(
    canary: Canary, listener: Listener
) -> None:
    """Layer 2's limit on LibreOffice 7.4, kept true in SECURITY.md: with every kept setting
    on and the sanitizer off, a linked OLE object still reads a local file."""
    probe = _probe("ole-file", canary, listener)
    _leaks_unguarded(probe, canary, listener)
    settings_only = Defences(False, lo_profile.LINK_SETTINGS)
    assert "canary text in the PDF" in _leaks(probe, settings_only, canary, listener)


def test_csv_formulas_reach_nothing_even_undefended(canary: Canary, listener: Listener) -> None:
    """`drac render` gives CSV to LibreOffice, whose CSV import evaluates formulas; 7.4 answers
    WEBSERVICE and references to other files with Err:540 (external content disabled), with
    no layer of drac's on. The sanitizer leaves CSV as it is, so this must stay true."""
    csv = (
        f'name,value\nweb,"=WEBSERVICE(""{listener.url("/csv")}"")"\n'
        f"file,\"='{canary.ods_file.as_uri()}'#$Sheet1.A1\"\n"
    ).encode()
    probe = Probe("csv-formulas", csv, ".csv")
    for defences in (Defences(False, ()), Defences()):
        assert _leaks(probe, defences, canary, listener) == []
        assert "Err:540" in pdf_text(_convert(probe, defences).data)


def test_an_xls_referencing_another_file_reads_nothing(canary: Canary) -> None:
    """XLS is binary and passes the sanitizer unchanged: LibreOffice itself (Err:540) and
    layers 2 and 3 are what stand between it and the file it names."""
    made = ods_external_formula(canary.ods_file.as_uri())
    xls = convert_with_libreoffice(made, ".ods", "xls", defences=Defences(False, ())).data
    assert b"canary.ods" in xls  # the reference is really in the workbook
    sheet = read_spreadsheet(xls, DocumentFormat.XLS, "linked.xls", SpreadsheetOptions())
    assert "Own cell" in sheet.markdown and canary.token not in sheet.markdown
    pdf = normalise(xls, DocumentFormat.XLS).data
    assert "Own cell" in pdf_text(pdf) and canary.token not in pdf_text(pdf)
