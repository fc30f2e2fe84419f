"""`drac inspect` on a workspace made offline and with a (fake) vision model: the files it
writes, checked without a browser (tests/integration/inspect/test_inspect_browser.py opens them)."""

from __future__ import annotations

import json
import re
import shutil
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from inspect_workspace import HOSTILE_NAME, build_inspect_workspace

from drac.cli import _register_commands, cli
from drac.inspect.build import report_name
from drac.local import Workspace

_register_commands()


class Tags(HTMLParser):
    """Start tags with their attributes, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def having(self, tag: str, attribute: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and attribute in a]


def parse(path: Path) -> Tags:
    tags = Tags()
    tags.feed(path.read_text("utf-8"))
    return tags


def inspect(ws: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["inspect", "-w", str(ws), *args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_inspect_workspace(tmp_path_factory.mktemp("inspect"))


def _plan_ids(ws: Path, document_id: str, version: int) -> list[str]:
    lines = (ws / "documents" / document_id / "chunks" / f"v{version:04d}.jsonl").read_text()
    return [json.loads(line)["chunk_id"] for line in lines.splitlines()]


def test_every_document_page_every_chunk_once_and_its_page_images(
    workspace: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    code, output = inspect(workspace, "--out", str(out))
    assert code == 0, output
    assert "4 document report(s)" in output and "broken.pdf: no plan" in output
    ws = Workspace(workspace, create=False)
    records = {r.source: r for r in ws.documents()}
    ws.close()
    index = parse(out / "index.html")
    rows = index.having("tr", "data-document-id")
    assert len(rows) == 5
    links = {a["href"] for a in index.having("a", "href")}
    for source, record in records.items():
        page = out / f"{report_name(record)}.html"
        if source == "broken.pdf":
            assert not page.exists() and page.name not in links
            continue
        assert page.name in links
        tags = parse(page)
        cards = [a["data-chunk-id"] for a in tags.having("article", "data-chunk-id")]
        assert sorted(cards) == sorted(
            _plan_ids(workspace, record.document_id, record.active_version or 0)
        )
        images = [a["src"] for a in tags.having("img", "src")]
        if record.format in ("pdf", "png"):
            assert len(images) == record.pages
            assert all((out / str(src)).stat().st_size > 1000 for src in images)
        else:
            assert images == [] and "text-view" in page.read_text()


def test_untrusted_names_and_text_are_escaped(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert inspect(workspace, "--out", str(out))[0] == 0
    for page in out.glob("*.html"):
        tags = parse(page)
        assert [t for t, _ in tags.tags].count("script") == 1  # drac's own, inline
        handlers = [(t, a) for t, attrs in tags.tags for a in attrs if a.lower().startswith("on")]
        assert handlers == []
        assert all(str(a["src"]).endswith(".png") for a in tags.having("img", "src"))
        assert not [a for a in tags.having("img", "src") if a["src"] in ("x", "missing.png")]
    html = next(out.glob("notes-*.html")).read_text("utf-8")
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert escape(HOSTILE_NAME) in html


def test_model_conversion_errors_show_on_their_page(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert inspect(workspace, "vision.pdf", "--out", str(out))[0] == 0
    html = next(out.glob("vision-*.html")).read_text("utf-8")
    page2 = html[html.index('id="page-2"') : html.index('id="page-3"')]
    assert 'class="note error"' in page2 and "conversion failed: model unavailable (test)" in page2
    assert 'class="note error"' not in html[: html.index('id="page-2"')]
    assert "status-PARTIAL" in html
    # the failed page also appears where it occurs in the element list
    elements = html[html.index('id="elements"') :]
    failed = elements[elements.index('data-page="2"') : elements.index('data-page="3"')]
    assert "page 2 (no elements)" in failed and "model unavailable (test)" in failed
    assert elements.count('class="note error"') == 1


def test_versions_side_by_side(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    code, output = inspect(
        workspace, "vision", "--version", "1", "--compare", "2", "--out", str(out)
    )
    assert code == 0, output
    tags = parse(next(out.glob("vision-*.html")))
    kinds = [a["data-kind"] for a in tags.having("tr", "data-kind")]
    assert kinds and set(kinds) <= {"unchanged", "split", "merged", "new", "removed"}
    assert "split" in kinds  # the fine strategy cuts v1's chunks smaller
    ws = Workspace(workspace, create=False)
    record = ws.find_document("vision.pdf")
    ws.close()
    compared = [a["data-cmp-chunk-id"] for a in tags.having("div", "data-cmp-chunk-id")]
    assert sorted(compared) == sorted(
        _plan_ids(workspace, record.document_id, 1) + _plan_ids(workspace, record.document_id, 2)
    )
    shown = [a["data-chunk-id"] for a in tags.having("article", "data-chunk-id")]
    assert sorted(shown) == sorted(_plan_ids(workspace, record.document_id, 1))

    code, output = inspect(workspace, "vision", "--compare", "9", "--out", str(out))
    assert code == 1 and "no plan version 9" in output
    code, output = inspect(workspace, "nothing-like-this", "--out", str(out))
    assert code == 1 and "no document matches" in output


def test_a_document_ingested_before_normalised_pdfs_were_kept(
    workspace: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "ws"
    shutil.copytree(workspace, copy)
    ws = Workspace(copy, create=False)
    record = ws.find_document("scan.png")
    ws.close()
    (copy / "documents" / record.document_id / "normalised.pdf").unlink()
    out = tmp_path / "report"
    assert inspect(copy, "scan.png", "--out", str(out))[0] == 0
    html = next(out.glob("scan-*.html")).read_text("utf-8")
    assert "no page images" in html and "<img" not in html and re.search(r"text-view", html)
