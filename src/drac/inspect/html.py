"""HTML of the report pages. Document text is untrusted: every piece of it goes through `esc`,
and a Content-Security-Policy allows no network and only drac's own script (by its hash)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Sequence
from functools import cache
from html import escape
from importlib import resources

from drac.inspect.histogram import size_histogram
from drac.inspect.model import (
    ChangeGroup,
    ChunkView,
    Comparison,
    DocumentView,
    ElementView,
    IndexRow,
    NoteKind,
    PageNote,
    PageView,
    hue,
)
from drac.models import DocumentRecord

PREVIEW_CHARS = 160


def esc(value: object) -> str:
    """Text made safe for HTML element content and quoted attribute values."""
    return escape(str(value), quote=True)


@cache
def _asset(name: str) -> str:
    return resources.files("drac.inspect").joinpath("assets", name).read_text("utf-8")


def page_html(title: str, body: str) -> str:
    """A whole HTML document with the report's inline style and script."""
    script = _asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    policy = (
        "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_asset('report.css')}</style></head>"
        f"<body>{body}<script>{script}</script></body></html>\n"
    )


def _pages_label(pages: Sequence[int]) -> str:
    if not pages:
        return "-"
    if len(pages) == 1:
        return f"p. {pages[0]}"
    if list(pages) == list(range(pages[0], pages[-1] + 1)):
        return f"p. {pages[0]}-{pages[-1]}"
    return "p. " + ", ".join(map(str, pages))


def notes_html(notes: Iterable[PageNote]) -> str:
    """Warnings and error markers as a list (empty string when none)."""
    items = "".join(
        f'<li class="note {note.kind.value}"><strong>{esc(note.kind.value)}</strong> '
        f"{esc(note.text)}</li>"
        for note in notes
    )
    return f'<ul class="notes">{items}</ul>' if items else ""


def chunk_card(chunk: ChunkView, target: int) -> str:
    """A chunk in its colour: number, size, pages, breadcrumb, element IDs and its text."""
    over = ' <span class="badge">over target</span>' if chunk.chars > target else ""
    if chunk.flags:  # what checking the conversion against the page flagged in this chunk
        over += (
            f' <span class="badge flagged" title="{esc("; ".join(chunk.flags))}">'
            f"{len(chunk.flags)} flagged</span>"
        )
    return (
        f'<article class="chunk c" id="chunk-{chunk.number}" data-chunk="{chunk.number}"'
        f' data-chunk-id="{esc(chunk.chunk_id)}" style="--h:{chunk.hue}">'
        f'<div class="head"><span>#{chunk.number}</span><span class="chars">'
        f"{chunk.chars:,} chars</span><span>{_pages_label(chunk.pages)}</span>{over}</div>"
        f'<p class="crumb">{esc(chunk.breadcrumb) or "<em>no breadcrumb</em>"}</p>'
        f'<p class="ids">{esc(" ".join(chunk.element_ids))}</p>'
        f"{_flags_list(chunk.flags)}"
        f"<details><summary>text</summary><pre>{esc(chunk.text)}</pre></details></article>"
    )


def _flags_list(flags: Sequence[str]) -> str:
    items = "".join(f"<li>{esc(flag)}</li>" for flag in flags)
    return f'<ul class="flags">{items}</ul>' if items else ""


def page_block(page: PageView, chunks: dict[int, ChunkView], target: int) -> str:
    """One page: its image or Markdown on the left, the chunks starting on it on the right."""
    if page.image is not None:
        view = f'<img src="{esc(page.image)}" alt="page {page.number}">'
        view = _with_boxes(view, page, chunks)
    else:
        view = f'<pre class="text-view">{esc(page.text or "")}</pre>'
    continued = "".join(
        f'<p class="continued">continues <a href="#chunk-{n}">chunk #{n}</a></p>'
        for n in page.continued
    )
    cards = "".join(chunk_card(chunks[n], target) for n in page.chunks)
    return (
        f'<div class="page" id="page-{page.number}"><div class="page-view">'
        f"<h3>Page {page.number}</h3>{notes_html(page.notes)}{view}</div>"
        f'<div class="page-chunks">{continued}{cards}</div></div>'
    )


def _with_boxes(image: str, page: PageView, chunks: dict[int, ChunkView]) -> str:
    """The page image under an SVG of the boxes each chunk's text has on this page, each
    chunk in its colour (boxes are PDF points from the page's top-left corner)."""
    if page.size_pt is None:
        return image
    groups = []
    for chunk in chunks.values():
        rects = "".join(
            f'<rect x="{x0:g}" y="{top:g}" width="{max(x1 - x0, 0.1):g}"'
            f' height="{max(bottom - top, 0.1):g}"></rect>'
            for entry in chunk.boxes
            if entry.page == page.number
            for x0, top, x1, bottom in entry.boxes
        )
        if rects:
            groups.append(
                f'<g class="chunk-boxes" data-chunk="{chunk.number}" style="--h:{chunk.hue}">'
                f"<title>chunk #{chunk.number}</title>{rects}</g>"
            )
    if not groups:
        return image
    width, height = page.size_pt
    return (
        f'<div class="page-figure">{image}<svg class="boxes" viewBox="0 0 {width:g} {height:g}"'
        f' preserveAspectRatio="none" aria-label="chunk boxes">{"".join(groups)}</svg></div>'
    )


def element_row(element: ElementView, start: bool) -> str:
    """An element in its chunk's colour (grey when it is in no chunk)."""
    classes = ["el", "heading" if element.kind == "heading" else element.kind]
    if element.chunk is None:
        classes.append("none")
        chunk, style = "", ""
    else:
        classes.append("c")
        chunk = f'<a href="#chunk-{element.chunk}">#{element.chunk}</a>'
        style = f' data-chunk="{element.chunk}" style="--h:{hue(element.chunk)}"'
    if start:
        classes.append("start")
    preview = " ".join(element.text.split())
    if len(preview) > PREVIEW_CHARS:
        preview = preview[: PREVIEW_CHARS - 1] + "…"
    return (
        f'<li class="{" ".join(classes)}"{style} id="el-{esc(element.id)}"><span>{chunk}</span>'
        f"<code>{esc(element.id)}</code><span>{esc(element.kind)}</span>"
        f"<span>p. {element.page}</span><span>{element.chars:,} c</span>"
        f'<span class="preview" title="{esc(preview)}">{esc(preview)}</span></li>'
    )


def elements_list(elements: Sequence[ElementView], pages: Sequence[PageView]) -> str:
    """Elements in order; a new chunk starts with a gap, a new page with its notes (a page
    without elements, such as one whose conversion failed, still shows its notes)."""
    notes = {page.number: page.notes for page in pages}
    last = max([len(pages), *(e.page for e in elements)], default=0)
    rows: list[str] = []
    page, chunk = 0, -1
    for element in elements:
        while page < element.page:
            page += 1
            rows.append(_page_break(page, notes.get(page, ()), page < element.page))
        rows.append(element_row(element, start=element.chunk != chunk))
        chunk = element.chunk if element.chunk is not None else -1
    rows.extend(_page_break(n, notes.get(n, ()), True) for n in range(page + 1, last + 1))
    return f'<ol class="elements">{"".join(rows)}</ol>'


def _page_break(number: int, notes: Sequence[PageNote], empty: bool) -> str:
    label = f"page {number}" + (" (no elements)" if empty else "")
    return f'<li class="page-break" data-page="{number}">{label}{notes_html(notes)}</li>'


def _mini(chunk: ChunkView, colour: int) -> str:
    ids = chunk.content_ids
    span = ids[0] if len(ids) == 1 else f"{ids[0]}…{ids[-1]}" if ids else "-"
    return (
        f'<div class="mini c" style="--h:{colour}" data-cmp-chunk-id="{esc(chunk.chunk_id)}">'
        f"#{chunk.number} · {chunk.chars:,} chars · {esc(span)} ({len(ids)})"
        f'<div class="crumb">{esc(chunk.breadcrumb)}</div></div>'
    )


def comparison_table(comparison: Comparison) -> str:
    """The two versions side by side, one row per group of chunks sharing elements."""
    left = {c.number: c for c in comparison.left}
    right = {c.number: c for c in comparison.right}
    rows = []
    for index, group in enumerate(comparison.groups, start=1):
        rows.append(_comparison_row(group, left, right, hue(index)))
    counts = ", ".join(
        f"{comparison.count(kind)} {kind.value}"
        for kind in sorted({g.kind for g in comparison.groups}, key=lambda k: k.value)
    )
    return (
        f"<p>v{comparison.left_version}: {len(left)} chunks; v{comparison.right_version}:"
        f" {len(right)} chunks; groups: {esc(counts) or 'none'}.</p>"
        f'<table class="compare"><thead><tr><th>v{comparison.left_version}</th>'
        f'<th class="kind">change</th><th>v{comparison.right_version}</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _comparison_row(
    group: ChangeGroup, left: dict[int, ChunkView], right: dict[int, ChunkView], colour: int
) -> str:
    return (
        f'<tr class="group" data-kind="{group.kind.value}">'
        f"<td>{''.join(_mini(left[n], colour) for n in group.left)}</td>"
        f'<td class="kind"><span class="badge kind-{group.kind.value}">{group.kind.value}'
        f"</span></td><td>{''.join(_mini(right[n], colour) for n in group.right)}</td></tr>"
    )


def _summary(view: DocumentView) -> str:
    sizes = sorted(c.chars for c in view.chunks)
    median = sizes[len(sizes) // 2] if sizes else 0
    strategy = view.strategy
    over = sum(1 for s in sizes if s > strategy.target_chars)
    return (
        '<div class="sizes">'
        + size_histogram(sizes, strategy.target_chars, strategy.hard_limit_chars)
        + f"<div><p>{len(sizes)} chunks; median {median:,} characters, largest"
        f" {max(sizes, default=0):,}; {over} over the target.</p><p>Strategy"
        f" <strong>{esc(strategy.name)}</strong>: {esc(strategy.planner)} planner, target"
        f" {strategy.target_chars:,}, hard limit {strategy.hard_limit_chars:,}, min"
        f" {strategy.min_chars:,}.</p></div></div>"
    )


def document_html(view: DocumentView) -> str:
    """The report page of one document."""
    record = view.record
    chunks = {c.number: c for c in view.chunks}
    target = view.strategy.target_chars
    versions = ", ".join(
        f"<strong>v{v}</strong>" if v == view.version else f"v{v}" for v in view.versions
    )
    of = len(view.versions)
    plans = f"plan v{view.version} of {of}" + (f" ({versions})" if of > 1 else "")
    source_note = {
        "source": "pages rendered from the source PDF",
        "normalised": "pages rendered from the PDF made at ingest",
        "text": "Markdown/text source: text view",
        "missing": "page images unavailable",
    }[view.page_source]
    header = (
        '<header class="top"><a href="index.html">all documents</a>'
        f"<h1>{esc(record.source)}</h1>"
        f'<p class="meta"><code>{esc(record.document_id)}</code> · {esc(record.format)} ·'
        f' <span class="badge status-{esc(record.status.value)}">{esc(record.status.value)}'
        f"</span> · {record.pages} page(s) · {plans}"
        f" · {esc(source_note)}</p>{notes_html(view.notes)}"
        '<nav class="toc"><a href="#sizes">sizes</a><a href="#pages">pages</a>'
        '<a href="#elements">elements</a>'
        + ('<a href="#compare">compare</a>' if view.comparison else "")
        + "</nav></header>"
    )
    sections = [
        f'<section id="sizes"><h2>Chunk sizes</h2>{_summary(view)}</section>',
        '<section id="pages"><h2>Pages and chunks</h2>'
        + "".join(page_block(page, chunks, target) for page in view.pages)
        + "</section>",
        f'<section id="elements"><h2>Elements ({len(view.elements)})</h2>'
        f"{elements_list(view.elements, view.pages)}</section>",
    ]
    if view.comparison is not None:
        sections.append(
            f'<section id="compare"><h2>Plan v{view.comparison.left_version} vs'
            f" v{view.comparison.right_version}</h2>{comparison_table(view.comparison)}</section>"
        )
    return page_html(
        f"drac inspect: {record.source}", header + "<main>" + "".join(sections) + "</main>"
    )


def index_html(rows: Sequence[IndexRow], workspace: str) -> str:
    """The index page: every document with status, pages, chunks and warnings, sortable."""
    head = "".join(
        f'<th class="sortable{" num" if numeric else ""}">{name}</th>'
        for name, numeric in (
            ("document", False),
            ("format", False),
            ("status", False),
            ("pages", True),
            ("chunks", True),
            ("plan", True),
            ("warnings", True),
            ("note", False),
        )
    )
    body = "".join(_index_row(row) for row in rows)
    return page_html(
        "drac inspect",
        f'<header class="top"><h1>drac inspect</h1><p class="meta">workspace {esc(workspace)}'
        f" · {len(rows)} document(s)</p></header><main><section>"
        f'<table class="sortable" id="documents"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></section></main>",
    )


def _index_row(row: IndexRow) -> str:
    name = (
        f'<a href="{esc(row.file_name)}">{esc(row.source)}</a>'
        if row.file_name
        else esc(row.source)
    )
    plan = f"v{row.version}" if row.version else "-"
    problem = (
        f'<span class="note error"><strong>report</strong> {esc(row.problem)}</span> '
        if row.problem
        else ""
    )
    return (
        f'<tr data-document-id="{esc(row.document_id)}"><td data-sort="{esc(row.source.lower())}">'
        f"{name}</td><td>{esc(row.format)}</td>"
        f'<td><span class="badge status-{esc(row.status)}">{esc(row.status)}</span></td>'
        f'<td class="num">{row.pages}</td><td class="num">{row.chunks}</td>'
        f'<td class="num" data-sort="{row.version or 0}">{plan}</td>'
        f'<td class="num">{row.warnings}</td><td>{problem}{esc(row.note)}</td></tr>'
    )


def unavailable_html(record: DocumentRecord, problem: str) -> str:
    """The page of a document the report cannot show: what it is and why not."""
    return page_html(
        f"drac inspect: {record.source}",
        '<header class="top"><a href="index.html">all documents</a>'
        f"<h1>{esc(record.source)}</h1>"
        f'<p class="meta"><code>{esc(record.document_id)}</code> · {esc(record.format)} ·'
        f' <span class="badge status-{esc(record.status.value)}">{esc(record.status.value)}'
        f"</span> · {record.pages} page(s)</p>"
        + notes_html([PageNote(kind=NoteKind.ERROR, text=problem)])
        + "</header>",
    )
