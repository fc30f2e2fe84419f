"""Incremental re-conversion: which page digest survives an edit elsewhere, and what a
one-page edit of a 40-page PDF saves.

Digest stability (ground truth: the page that was edited is known):
- a 40-page PDF made by the project's test code, page 17's text changed: per page, does the
  digest of the rendered PNG (what drac uses) / of the text layer / of the decoded content
  stream(s) and the resources they name (pypdf, in a contained worker) change?
- the same PDF saved again by pypdf with each content stream wrapped in `q ... Q` (drawing
  the same): pages whose content-stream digest changed though nothing on them did;
- a corpus DOCX through LibreOffice twice unchanged (a re-export), then with one word of one
  paragraph changed (same length) and with a sentence added to it: pages whose digest changed.

Savings: a 40-page PDF ingested, then a version with page 17 edited ingested at the same
path, against the same edit ingested without an earlier version (a full conversion), both
with a scripted vision model that takes `--latency` seconds per call, interleaved
`--rounds` times; and once each, a version with 5 pages put in front.

    DRAC_SHARED=/work/shared .venv/bin/python bench/incremental.py [--latency 1.0] [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import io
import re
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from _common import CORPUS, REPO, machine, write_section

sys.path.insert(0, str(REPO / "tests"))
from page_model import ImageVision, document_pdf, labels

from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import normalise
from drac.documents.pdf.render import RenderOptions, render_pages
from drac.documents.sandbox.containment import GIB, Limits, contained_call, contained_task
from drac.documents.vision.incremental import is_reused, page_digest
from drac.local import Workspace
from drac.local.pipeline import IngestSettings, ingest_file
from drac.models import TokenUsage
from drac.ports import ModelReply

PAGES = 40
EDITED = 17
ASSUMED_BATCH_S = 25.0  # "Cloud throughput": the assumed Bedrock latency of a 5-page batch
DOCX = CORPUS / "CloudWay-24" / "docx" / "Careers at CloudWay 24.docx"


class SlowVision(ImageVision):
    """The image-scripted model, taking `latency` seconds per call."""

    def __init__(self, latency: float) -> None:
        super().__init__()
        self.latency = latency

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        time.sleep(self.latency)
        reply = super().convert(system, prompt, images)
        return reply.model_copy(update={"usage": TokenUsage(input_tokens=0, output_tokens=0)})


STREAM_LIMITS = Limits(
    memory_bytes=2 * GIB, cpu_s=300.0, step_cpu_s=60.0, wall_s=600.0,
    preload=("incremental", "pypdf"),
)  # fmt: skip
"""The contained pypdf worker of the content-stream digest (this module, run from bench/)."""


def _worker_side() -> ModuleType:
    """This file as the module a worker imports ("incremental"), not as `__main__`: its tasks
    are registered under that name."""
    return importlib.import_module("incremental")


@contained_task
def content_digests_here(pdf: bytes) -> list[str]:
    """Per page, in the worker: a digest of the page's decoded content stream(s) and of the
    resources it names (fonts, images, by their decoded content, not their object numbers)."""
    from pypdf import PdfReader

    def value(obj: object, depth: int = 0) -> object:
        obj = obj.get_object() if hasattr(obj, "get_object") else obj
        if depth > 8:
            return "..."
        if hasattr(obj, "get_data"):
            return [value(dict(obj), depth + 1), hashlib.sha256(obj.get_data()).hexdigest()]
        if isinstance(obj, dict):
            return {str(k): value(v, depth + 1) for k, v in sorted(obj.items()) if k != "/Parent"}
        if isinstance(obj, list):
            return [value(v, depth + 1) for v in obj]
        return repr(obj)

    digests = []
    for page in PdfReader(io.BytesIO(pdf)).pages:
        contents = page.get_contents()
        stream = contents.get_data() if contents is not None else b""
        resources = repr(value(page.get("/Resources", {})))
        digests.append(hashlib.sha256(stream + b"\0" + resources.encode()).hexdigest())
    return digests


@contained_task
def resaved_here(pdf: bytes) -> bytes:
    """In the worker: the PDF written again by pypdf with every page's content stream wrapped
    in `q ... Q` (drawing the same, other bytes), as tools that stamp or merge pages save it."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import DecodedStreamObject

    reader = PdfReader(io.BytesIO(pdf))
    writer = PdfWriter()
    for page in reader.pages:
        added = writer.add_page(page)
        contents = page.get_contents()
        stream = DecodedStreamObject()
        stream.set_data(b"q\n" + (contents.get_data() if contents is not None else b"") + b"\nQ\n")
        added.replace_contents(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _digests(pdf: bytes) -> tuple[list[str], list[str], list[str]]:
    """Per page: the rendered PNG's digest, the text layer's, the content stream's."""
    pngs, texts = [], []
    for page in render_pages(pdf, RenderOptions()):
        pngs.append(page_digest(page.png))
        texts.append(hashlib.sha256(page.text_layer.encode()).hexdigest())
    streams = contained_call(
        _worker_side().content_digests_here, pdf, limits=STREAM_LIMITS, what="reading the PDF"
    )
    return pngs, texts, list(streams)


def _changed(a: list[str], b: list[str]) -> str:
    pages = [n for n, (x, y) in enumerate(zip(a, b, strict=False), start=1) if x != y]
    extra = f" (+{abs(len(a) - len(b))} pages)" if len(a) != len(b) else ""
    if len(pages) == len(a) > 1:
        return f"all {len(a)}{extra}"
    return (", ".join(map(str, pages)) or "none") + extra


def _row(label: str, a: tuple[list[str], ...], b: tuple[list[str], ...]) -> str:
    return f"| {label} | " + " | ".join(_changed(x, y) for x, y in zip(a, b, strict=True)) + " |"


def pdf_stability() -> list[str]:
    before = labels(PAGES)
    after = [*before[: EDITED - 1], f"Page {EDITED} rewritten", *before[EDITED:]]
    first = _digests(document_pdf(before))
    return [
        _row(f"40-page PDF, page {EDITED}'s text changed", first, _digests(document_pdf(after))),
        _row("the same 40 pages made again", first, _digests(document_pdf(before))),
        _row(
            "the same PDF saved again by pypdf, content streams wrapped in q/Q",
            first,
            _digests(
                contained_call(
                    _worker_side().resaved_here,
                    document_pdf(before),
                    limits=STREAM_LIMITS,
                    what="re-saving the PDF",
                )
            ),
        ),
    ]


def _edited_docx(data: bytes, edit: str) -> bytes:
    """The DOCX with its first long paragraph edited: one word swapped (same length) or a
    sentence added."""
    source = zipfile.ZipFile(io.BytesIO(data))
    xml = source.read("word/document.xml").decode()
    runs = list(re.finditer(r"<w:t(?: [^>]*)?>([^<]{60,})</w:t>", xml))
    target = runs[len(runs) // 2]
    text = target.group(1)
    if edit == "word":
        word = re.search(r"\b[a-z]{5,}\b", text)
        assert word is not None
        new = text[: word.start()] + word.group()[::-1] + text[word.end() :]
    else:
        new = text + " This sentence was added by the edit, long enough to take a line or two."
    xml = xml[: target.start(1)] + new + xml[target.end(1) :]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as copy:
        for item in source.infolist():
            body = xml.encode() if item.filename == "word/document.xml" else source.read(item)
            copy.writestr(item, body)
    return out.getvalue()


def docx_stability() -> list[str]:
    data = DOCX.read_bytes()
    first, _ = normalise(data, DocumentFormat.DOCX)
    again, _ = normalise(data, DocumentFormat.DOCX)
    base = _digests(first)
    same = "equal" if first == again else "differ"
    rows = [
        _row(
            f"{DOCX.name} ({len(base[0])} pages) through LibreOffice again, unchanged "
            f"(PDF bytes {same})",
            base,
            _digests(again),
        )
    ]
    for edit, label in (
        ("word", "one word of one paragraph changed (same length)"),
        ("sentence", "a sentence added to one paragraph"),
    ):
        pdf, _ = normalise(_edited_docx(data, edit), DocumentFormat.DOCX)
        rows.append(_row(f"the DOCX, {label}", base, _digests(pdf)))
    return rows


INSERTED = 5
"""Pages put in front of the 40 (one whole batch of 5)."""


def _ingest_pair(
    root: Path, latency: float, earlier: bool, front: bool = False
) -> tuple[float, int, int]:
    """Seconds of ingesting the edited version (page 17 edited, or `front`: 5 pages put in
    front), its model calls and reused batches."""
    before = labels(PAGES)
    after = [*before[: EDITED - 1], f"Page {EDITED} rewritten", *before[EDITED:]]
    if front:
        after = [*(f"Inserted page {n}" for n in range(1, INSERTED + 1)), *before]
    ws = Workspace(root / "ws")
    try:
        path = root / "report.pdf"
        if earlier:
            path.write_bytes(document_pdf(before))
            ingest_file(path, ws, IngestSettings(), vision=SlowVision(latency))
        path.write_bytes(document_pdf(after))
        vision = SlowVision(latency)
        started = time.perf_counter()
        outcome = ingest_file(path, ws, IngestSettings(), vision=vision)
        seconds = time.perf_counter() - started
        assert outcome.status == "INDEXED", outcome
        reused = sum(
            is_reused(e) for e in ws.ledger_entries() if e.document_id == outcome.document_id
        )
        return seconds, len(vision.calls), reused
    finally:
        ws.close()


def savings(latency: float, rounds: int) -> list[str]:
    full: list[tuple[float, int, int]] = []
    incremental: list[tuple[float, int, int]] = []
    for _ in range(rounds):  # interleaved: the machine's load falls on both alike
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            full.append(_ingest_pair(Path(a), latency, earlier=False))
            incremental.append(_ingest_pair(Path(b), latency, earlier=True))
    rows = []
    for name, runs in (
        ("full conversion (no earlier version)", full),
        ("incremental (earlier version at the same path)", incremental),
    ):
        seconds = statistics.median(run[0] for run in runs)
        rows.append(f"| {name} | {runs[0][1]} | {runs[0][2]} | {seconds:.2f} |")
    saved_calls = full[0][1] - incremental[0][1]
    saved_s = statistics.median(r[0] for r in full) - statistics.median(r[0] for r in incremental)
    for name, earlier in (
        (f"{INSERTED} pages put in front: full conversion", False),
        (f"{INSERTED} pages put in front: incremental", True),
    ):
        with tempfile.TemporaryDirectory() as root:
            seconds, calls, reused = _ingest_pair(Path(root), latency, earlier, front=True)
        rows.append(f"| {name} | {calls} | {reused} | {seconds:.2f} (one round) |")
    rows.append(
        f"\nSaved by the one-page edit: {saved_calls} of {full[0][1]} model calls, "
        f"{saved_s:.2f} s of wall time at {latency:g} s per call (median of {rounds} rounds); "
        f'at the {ASSUMED_BATCH_S:g} s per batch assumed in "Cloud throughput", '
        f"{saved_calls * ASSUMED_BATCH_S:.0f} model-seconds."
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    stability = [*pdf_stability(), *docx_stability()]
    saved = savings(args.latency, args.rounds)
    body = "\n".join(
        [
            "## Incremental re-conversion (a new version reuses unchanged batches)",
            "",
            f"Command: `DRAC_SHARED=/work/shared .venv/bin/python bench/incremental.py "
            f"--latency {args.latency:g} --rounds {args.rounds} --write`  ",
            f"Machine: {machine()}",
            "",
            "Pages whose digest changed (ground truth: the edited page):",
            "",
            "| versions compared | rendered PNG digest (drac's) | text-layer digest "
            "| content stream + resources digest (pypdf) |",
            "|---|---|---|---|",
            *stability,
            "",
            f"Ingesting the version of a {PAGES}-page PDF with page {EDITED} edited, or with "
            f"{INSERTED} pages put in front (batches of 5, scripted model, {args.latency:g} s "
            "per call, up to 5 calls at once; the local runtime, which the cloud matches since "
            "its kept batches are named by their pages' digests: tests/e2e/test_incremental.py "
            "asserts the same 8 reused and 1 converted there):",
            "",
            "| run | model calls | batches reused | seconds (median) |",
            "|---|---|---|---|",
            *saved,
        ]
    )
    print(body)
    if args.write:
        write_section("incremental", body)


if __name__ == "__main__":
    main()
