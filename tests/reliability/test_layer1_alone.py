"""Layer 1 holds on its own: each reference that once passed the sanitizer (and was stopped
only by LibreOffice 7.4's own behaviour) is removed or refuses its document, is counted in
the document's warning, and the cleaned file, converted by real LibreOffice as in Lambda
(the profile settings, no network namespace, no Landlock), reads no canary and reaches no
listener."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_links import Canary, Listener, canary_images, listening, pdf_text, write_canary
from reliability.hostile_layer1 import (
    docx_alt_chunk,
    hidden_package_payload,
    html_style_markup,
    ods_formula,
    pptx_hidden_package,
    strict_docx_field,
    xlsx_formula,
)

from drac.documents.intake import normalise
from drac.documents.intake.normalise import convert_with_libreoffice
from drac.documents.sandbox.references import EXTERNAL_DATA, FIELD, LINKED_DOCUMENT, OTHER
from drac.errors import DocumentError

pytestmark = pytest.mark.libreoffice

_NO_CONTAINMENT_GUARD = """
import os, sys
at = sys.argv.index("--")
os.execvp(sys.argv[at + 1], sys.argv[at + 1:])
"""
"""A guard that starts LibreOffice with no namespace and no Landlock, as Lambda must."""

REFUSED = "refused"


def _probes(canary: Canary, listener: Listener) -> dict[str, tuple[bytes, str, str]]:
    """name -> (document, suffix, the kind its warning counts, or REFUSED)."""
    text, png, sheet = canary.text_file, canary.png_file, canary.ods_file
    built = f'"\'file"&amp;CHAR(58)&amp;"//{sheet}\'#$Sheet1.A1"'
    return {
        "strict includetext simple": (
            strict_docx_field(f'INCLUDETEXT "{text}"', simple=True), ".docx", FIELD
        ),
        "strict includetext complex": (
            strict_docx_field(f'INCLUDETEXT "{text}"', simple=False), ".docx", FIELD
        ),
        "strict includepicture": (
            strict_docx_field(f'INCLUDEPICTURE "{listener.url("/strict.png")}"', simple=False),
            ".docx", FIELD,
        ),
        "alt chunk": (
            docx_alt_chunk(
                f'<div><img src="{png.as_uri()}"/><img src="{png}"/>'
                f'<iframe src="{listener.url("/alt")}"></iframe><p>chunk text</p></div>'
            ),
            ".docx", LINKED_DOCUMENT,
        ),
        "hidden package": (
            pptx_hidden_package(hidden_package_payload(text.as_uri())), ".pptx", REFUSED
        ),
        "xlsx entity": (
            xlsx_formula(
                f'W&#69;BSERVICE("http"&amp;CHAR(58)&amp;"//127.0.0.1:{listener.port}/entity")'
            ),
            ".xlsx", EXTERNAL_DATA,
        ),
        "xlsx cdata": (
            xlsx_formula(f'<![CDATA[WEBSERVICE("{listener.url("/cdata")}")]]>'),
            ".xlsx", EXTERNAL_DATA,
        ),
        "xlsx long": (
            xlsx_formula('"' + " " * 5000 + f'"&amp;WEBSERVICE("{listener.url("/long")}")'),
            ".xlsx", EXTERNAL_DATA,
        ),
        "xlsx built name": (xlsx_formula(f"INDIRECT({built})"), ".xlsx", EXTERNAL_DATA),
        "ods built name": (
            ods_formula(f"of:=INDIRECT(\"'file\"&CHAR(58)&\"//{sheet}'#$Sheet1.A1\")"),
            ".ods", EXTERNAL_DATA,
        ),
        "ods built url": (
            ods_formula(
                f'of:=WEBSERVICE("http"&CHAR(58)&"//127.0.0.1:{listener.port}/ods")'
            ),
            ".ods", EXTERNAL_DATA,
        ),
        "style markup": (html_style_markup(str(png)), ".html", OTHER),
    }  # fmt: skip


_NAMES = (
    "strict includetext simple", "strict includetext complex", "strict includepicture",
    "alt chunk", "hidden package", "xlsx entity", "xlsx cdata", "xlsx long", "xlsx built name",
    "ods built name", "ods built url", "style markup",
)  # fmt: skip


@pytest.fixture(scope="module")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Canary:
    return write_canary(tmp_path_factory.mktemp("canary"))


@pytest.fixture(scope="module")
def listener(canary: Canary) -> Iterator[Listener]:
    with listening(canary.token) as served:
        yield served


@pytest.fixture
def as_in_lambda(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    guard = tmp_path / "guard.py"
    guard.write_text(_NO_CONTAINMENT_GUARD)
    monkeypatch.setattr(normalise, "_GUARD", guard)


@pytest.mark.parametrize("name", _NAMES)
def test_layer_one_alone_stops_the_probe_and_counts_it(
    name: str, canary: Canary, listener: Listener, as_in_lambda: None
) -> None:
    data, suffix, kind = _probes(canary, listener)[name]
    before = len(listener.requests)
    if kind == REFUSED:
        with pytest.raises(DocumentError, match="ZIP package after other bytes"):
            convert_with_libreoffice(data, suffix, "pdf", timeout_s=120)
        assert listener.requests[before:] == []
        return
    converted = convert_with_libreoffice(data, suffix, "pdf", timeout_s=120)
    assert listener.requests[before:] == []
    text = pdf_text(converted.data)
    assert canary.token not in text
    assert canary_images(converted.data) == 0
    assert any(f"(1 {kind})" in warning for warning in converted.warnings), converted.warnings
    honest = {".docx": "Body text", ".xlsx": "Own cell", ".ods": "Own cell", ".html": "Honest"}
    assert honest[suffix] in text
