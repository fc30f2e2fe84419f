"""A workspace with every kind of document `drac inspect` shows, for its tests.

- a PDF converted offline (page images from the source);
- the same PDF converted by a fake vision model, one page per batch, page 2 failing (PARTIAL,
  an error marker), then re-planned with the `fine` strategy (plan v2);
- a scan (PNG) converted by the fake model (page image from the normalised PDF);
- Markdown whose name and text try to inject markup (text view);
- a file that fails (on the index only).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from drac.documents.convert import ConversionOptions
from drac.errors import ModelCallError
from drac.local import Workspace
from drac.local.pipeline import IngestSettings, ingest_file, replan_document
from drac.ports import ModelReply, VisionModel
from drac.strategies import resolve_strategy

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "documents"
HOSTILE_NAME = 'notes "><img src=x onerror=alert(1)>.md'
HOSTILE_TEXT = (
    "# Release <script>window.__pwned = 1</script> notes\n\n"
    'An <img src="missing.png" onerror="window.__pwned = 2"> inline image and a '
    "</pre></details></article><script>window.__pwned = 3</script> closing attempt.\n\n"
    "## Second\n\n" + "".join(f"Paragraph {i} about releases and upgrades.\n\n" for i in range(30))
)


class FakeVision(VisionModel):
    """Writes a short section per page; pages in `failing` fail (the batch raises)."""

    name = "fake-vision"

    def __init__(self, failing: Sequence[int] = ()) -> None:
        self.failing = set(failing)

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        pages = [int(n) for n in re.findall(r"<!-- Page (\d+) -->", prompt)]
        if self.failing & set(pages):
            raise ModelCallError("model unavailable (test)")
        text = "\n\n".join(
            f"<!-- Page {n} -->\n\n## Page {n} topic\n\n"
            + "\n\n".join(
                f"Point {i} of page {n}: warranty terms, claims and repairs." for i in range(12)
            )
            for n in pages
        )
        return ModelReply(text=text, model=self.name)


def _scan(path: Path) -> Path:
    image = Image.new("RGB", (600, 800), "white")
    draw = ImageDraw.Draw(image)
    for row in range(12):
        draw.rectangle((60, 80 + row * 50, 540, 100 + row * 50), fill=(40, 40, 40))
    image.save(path, format="PNG")
    return path


def build_inspect_workspace(root: Path) -> Path:
    """Make the documents under `root/docs` and ingest them into `root/ws`; return the latter."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", docs / "offline.pdf")
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", docs / "vision.pdf")
    (docs / "vision.pdf").write_bytes((docs / "vision.pdf").read_bytes() + b"\n% model copy\n")
    _scan(docs / "scan.png")
    (docs / HOSTILE_NAME).write_text(HOSTILE_TEXT, encoding="utf-8")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7 this is not a PDF")
    ws = Workspace(root / "ws")
    try:
        offline = IngestSettings()
        one_page = IngestSettings(conversion=ConversionOptions(batch_pages=1))
        ingest_file(docs / "offline.pdf", ws, offline)
        vision = ingest_file(docs / "vision.pdf", ws, one_page, vision=FakeVision(failing=[2]))
        ingest_file(docs / "scan.png", ws, one_page, vision=FakeVision())
        ingest_file(docs / HOSTILE_NAME, ws, offline)
        ingest_file(docs / "broken.pdf", ws, offline)
        record = ws.get_document(vision.document_id or "")
        assert record is not None and record.status.value == "PARTIAL", vision
        replan_document(record, ws, resolve_strategy("fine"))
    finally:
        ws.close()
    return root / "ws"
