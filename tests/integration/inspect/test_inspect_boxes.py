"""`drac inspect` draws each chunk's boxes on its page image, in the chunk's colour."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner
from pdfs import Text, make_pdf, text_page

from drac.cli import _register_commands, cli
from drac.inspect.model import hue

_register_commands()


class Shapes(HTMLParser):
    """The chunk box groups and their rectangles, and the chunk cards' colours."""

    def __init__(self) -> None:
        super().__init__()
        self.groups: dict[int, list[tuple[float, ...]]] = {}
        self.card_style: dict[int, str] = {}
        self.group_style: dict[int, str] = {}
        self.scripts = 0
        self.viewboxes: list[str] = []
        self._group: int | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "svg" and found.get("class") == "boxes":
            self.viewboxes.append(found["viewbox"] or "")
        if tag == "article" and "data-chunk" in found:
            self.card_style[int(found["data-chunk"] or 0)] = found["style"] or ""
        if tag == "g" and found.get("class") == "chunk-boxes":
            self._group = int(found["data-chunk"] or 0)
            self.group_style[self._group] = found["style"] or ""
            self.groups[self._group] = []
        if tag == "rect" and self._group is not None:
            x, y = float(found["x"] or 0), float(found["y"] or 0)
            w, h = float(found["width"] or 0), float(found["height"] or 0)
            self.groups[self._group].append((x, y, x + w, y + h))

    def handle_endtag(self, tag: str) -> None:
        if tag == "g":
            self._group = None


def test_each_chunks_boxes_are_drawn_on_its_page_in_its_colour(tmp_path: Path) -> None:
    lines = [
        Text(f"Clause {i} <script>alert({i})</script> of the terms and conditions", 72, y)
        for i, y in enumerate(range(760, 60, -40))
    ]  # paragraphs apart: several chunks
    pdf = tmp_path / "terms.pdf"
    pdf.write_bytes(make_pdf([text_page(lines)]))
    ws = tmp_path / "ws"
    runner = CliRunner()
    result = runner.invoke(cli, ["ingest", str(pdf), "-w", str(ws), "--no-embed"])
    assert result.exit_code == 0, result.output
    exported = runner.invoke(cli, ["export", "-w", str(ws)]).output
    chunks = [json.loads(line) for line in exported.splitlines()]
    result = runner.invoke(cli, ["inspect", "-w", str(ws), "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    (report,) = [p for p in (tmp_path / "report").glob("terms-*.html")]
    shapes = Shapes()
    shapes.feed(report.read_text("utf-8"))
    assert shapes.scripts == 1  # drac's own; the PDF's text stays text
    assert shapes.viewboxes == ["0 0 612 792"]
    assert len(chunks) >= 2
    assert sorted(shapes.groups) == list(range(1, len(chunks) + 1))
    for number, chunk in enumerate(chunks, start=1):
        (entry,) = chunk["boxes"]
        drawn = shapes.groups[number]
        assert drawn == [tuple(box) for box in entry["boxes"]] or all(
            abs(a - b) < 0.01
            for d, e in zip(drawn, entry["boxes"], strict=True)
            for a, b in zip(d, e, strict=True)
        )
        assert f"--h:{hue(number)}" in shapes.group_style[number]
        assert shapes.group_style[number] == shapes.card_style[number]
