"""Report parts without a browser: the size histogram, page notes, escaping, and names."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from drac.inspect.build import report_name
from drac.inspect.histogram import size_histogram
from drac.inspect.html import chunk_card, esc, page_html
from drac.inspect.model import ChunkView, NoteKind
from drac.inspect.pages import marker_notes, warning_notes
from drac.models import DocumentRecord


def test_histogram_counts_every_chunk_and_marks_target_and_limit() -> None:
    svg = size_histogram([120, 130, 990, 1100, 1999], target=1100, hard_limit=2000)
    root = ET.fromstring(svg)  # well-formed SVG
    ns = "{http://www.w3.org/2000/svg}"
    bars = root.findall(f"{ns}rect") or root.findall("rect")
    counts = [int(re.search(r": (\d+) chunk", "".join(b.itertext())).group(1)) for b in bars]
    assert sum(counts) == 5 and sorted(counts) == [1, 1, 1, 2]
    assert "target 1,100" in svg and "hard limit 2,000" in svg
    lines = {line.get("class"): float(line.get("x1")) for line in root.iter() if line.get("x1")}
    assert lines["axis"] < lines["target"] < lines["limit"]
    assert size_histogram([], 1100, 2000).count("<rect") == 0


def test_markers_and_warnings_land_on_their_pages() -> None:
    markdown = (
        "<!-- Page 1 -->\n\ntext\n\n<!-- Page 2: conversion failed: model timed out -->\n\n"
        "<!-- Page 3 -->\n\n<!-- Page 3: no text layer (scanned page?); needs a vision model -->"
    )
    notes = marker_notes(markdown)
    assert [(n, note.kind) for n, note in notes] == [(2, NoteKind.ERROR), (3, NoteKind.PARTIAL)]
    assert notes[0][1].text == "conversion failed: model timed out"
    on_pages, general = warning_notes(
        [
            "pages 1-2: page markers missing for pages 2",
            "page 3 has no text layer; it needs a vision model to be converted",
            "pages 2: conversion failed: model timed out",
            "extension says docx but the content is pdf",
            "page 9: beyond the document",
        ],
        pages=3,
    )
    assert [(n, note.kind) for n, note in on_pages] == [
        (1, NoteKind.WARNING),
        (2, NoteKind.WARNING),
        (3, NoteKind.PARTIAL),
    ]
    assert [note.text for note in general] == [
        "extension says docx but the content is pdf",
        "page 9: beyond the document",
    ]


def test_document_text_is_escaped_in_cards_and_the_policy_allows_no_network() -> None:
    chunk = ChunkView(
        number=3,
        chunk_id='id"><script>',
        version=1,
        breadcrumb="A <b>bold</b> & crumb",
        element_ids=("h1", "p2"),
        content_ids=("p2",),
        chars=42,
        pages=(2, 3),
        text="</pre></details><script>alert(1)</script>",
    )
    card = chunk_card(chunk, target=1100)
    assert "<script>" not in card and "<b>" not in card
    assert "&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;" in card
    assert 'data-chunk-id="id&quot;&gt;&lt;script&gt;"' in card
    assert "p. 2-3" in card and "42 chars" in card
    page = page_html('<title>"x"', card)
    policy = re.search(r'content="([^"]*)"', page.split("Content-Security-Policy")[1]).group(1)
    assert "default-src &#x27;none&#x27;" in policy and "script-src &#x27;sha256-" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1]
    assert page.count("<script>") == 1 and esc("<") == "&lt;"


def test_report_names_are_safe_file_names() -> None:
    record = DocumentRecord(document_id="abcdef0123456789", source='../a "b"<c>.pdf', sha256="")
    name = report_name(record)
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name) and name.endswith("-abcdef012345")
    assert not name.startswith(".")
