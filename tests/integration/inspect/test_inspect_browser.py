"""`drac inspect` reports opened from the file system in a real browser: Debian's Chromium,
headless, driven by Playwright (scripts/setup.sh installs both; Playwright never downloads a
browser here).

DRAC_INSPECT_SCREENSHOT=docs/images/inspect.png makes the screenshot test keep its picture
(the README's).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from inspect_workspace import build_inspect_workspace
from PIL import Image, ImageStat

from drac.cli import _register_commands, cli
from drac.local import Workspace

_register_commands()

CHROMIUM = Path(os.environ.get("DRAC_CHROMIUM", "/usr/bin/chromium"))
# Without the background-networking flags Chromium keeps trying to reach Google's hosts,
# which this closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 1000}


def _require_browser() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not CHROMIUM.exists():
        message = f"needs playwright and Chromium at {CHROMIUM} (bash scripts/setup.sh as root)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return sync_playwright


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(workspace, report folder): every document at its active plan, and vision.pdf's v1
    beside its re-plan v2."""
    ws = build_inspect_workspace(tmp_path_factory.mktemp("browser"))
    out = ws.parent / "report"
    for args in ([], ["vision.pdf", "--version", "1", "--compare", "2"]):
        result = CliRunner().invoke(cli, ["inspect", *args, "-w", str(ws), "--out", str(out)])
        assert result.exit_code == 0, result.output
    return ws, out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _require_browser()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


class Opened:
    """A page loaded from a file, with everything it complained about."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport=VIEWPORT)
        self.problems: list[str] = []
        self.page.on(
            "console", lambda m: self.problems.append(m.text) if m.type == "error" else None
        )
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on(
            "dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss())
        )
        self.page.on("request", self._request)
        self.page.goto(path.resolve().as_uri(), wait_until="load")

    def _request(self, request: Any) -> None:
        if not request.url.startswith(("file:", "data:")):
            self.problems.append(f"network request: {request.url}")

    def js(self, script: str) -> Any:
        return self.page.evaluate(script)


def _plan_ids(ws: Path, document_id: str, version: int) -> list[str]:
    text = (ws / "documents" / document_id / "chunks" / f"v{version:04d}.jsonl").read_text()
    return [json.loads(line)["chunk_id"] for line in text.splitlines()]


def test_every_report_shows_each_chunk_once_loads_its_pages_and_logs_no_error(
    browser: Any, report: tuple[Path, Path]
) -> None:
    ws_path, out = report
    ws = Workspace(ws_path, create=False)
    records = [r for r in ws.documents() if r.active_version]
    ws.close()
    index = Opened(browser, out / "index.html")
    links = index.js("Array.from(document.querySelectorAll('#documents a')).map(a => a.href)")
    assert len(links) == len(records) == 4
    for link in links:
        opened = Opened(browser, Path(link.removeprefix("file://")))
        document_id = opened.js("document.querySelector('.meta code').textContent")
        record = next(r for r in records if r.document_id == document_id)
        version = record.active_version or 0
        if record.source == "vision.pdf":
            version = 1  # the comparison run wrote v1 beside v2
        shown = opened.js(
            "Array.from(document.querySelectorAll('article.chunk')).map(a => a.dataset.chunkId)"
        )
        assert sorted(shown) == sorted(_plan_ids(ws_path, record.document_id, version))
        assert len(set(shown)) == len(shown)
        images = opened.js(
            "Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
        )
        expected = record.pages if record.format in ("pdf", "png") else 0
        assert len(images) == expected, record.source
        assert all(done and width > 0 and height > 0 for done, width, height in images)
        assert opened.js("typeof window.__pwned") == "undefined"
        assert opened.problems == [], (record.source, opened.problems)
        opened.page.close()
    assert index.problems == []


def test_compare_and_highlight_work_in_the_page(browser: Any, report: tuple[Path, Path]) -> None:
    _, out = report
    opened = Opened(browser, next(out.glob("vision-*.html")))
    kinds = opened.js("Array.from(document.querySelectorAll('tr.group')).map(r => r.dataset.kind)")
    assert "split" in kinds
    card = opened.page.locator("article.chunk").first
    card.hover()
    number = card.get_attribute("data-chunk")
    lit = opened.js("Array.from(document.querySelectorAll('.hl')).map(n => n.dataset.chunk)")
    assert lit and set(lit) == {number} and len(lit) > 1  # the card and its elements
    assert opened.problems == []


def test_index_sorts_by_the_clicked_column(browser: Any, report: tuple[Path, Path]) -> None:
    _, out = report
    opened = Opened(browser, out / "index.html")

    def column(index: int) -> list[str]:
        return opened.js(
            "Array.from(document.querySelectorAll('#documents tbody tr'))"
            f".map(r => r.cells[{index}].textContent.trim())"
        )

    headers = opened.page.locator("#documents th")
    headers.nth(4).click()  # chunks
    ascending = [int(v) for v in column(4)]
    assert ascending == sorted(ascending) and len(ascending) == 5
    headers.nth(4).click()
    assert [int(v) for v in column(4)] == sorted(ascending, reverse=True)
    headers.nth(0).click()  # document
    names = column(0)
    assert names == sorted(names, key=str.lower)
    assert opened.problems == []


def test_screenshot_is_not_blank(browser: Any, report: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = report
    opened = Opened(browser, next(out.glob("offline-*.html")))
    png = opened.page.screenshot()
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (VIEWPORT["width"], VIEWPORT["height"])
    spread = ImageStat.Stat(image.convert("L")).stddev[0]
    colours = len(image.getcolors(maxcolors=1 << 20) or [])
    assert spread > 20 and colours > 200, (spread, colours)
    (tmp_path / "inspect.png").write_bytes(png)
    keep = os.environ.get("DRAC_INSPECT_SCREENSHOT")
    if keep:
        # an adaptive palette keeps the README's picture small
        image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(keep, optimize=True)
        shutil.copystat(tmp_path / "inspect.png", keep)
