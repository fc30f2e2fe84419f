"""`drac render` end to end on corpus files."""


import pytest
from click.testing import CliRunner
from PIL import Image
from shared_paths import VELVERA, require

from drac.cli import (
    cli,
    render_command,  # noqa: F401  (registers the command)
)

CORPUS = require(VELVERA)


def test_render_writes_every_page_as_the_pipeline_renders_it(tmp_path):
    pdf = CORPUS / "pdf" / "accessories.pdf"
    if not pdf.exists():
        pytest.skip("corpus not available")
    note = tmp_path / "note.md"
    note.write_text("# Note\n")
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.4 broken")
    result = CliRunner().invoke(
        cli, ["render", str(pdf), str(note), str(junk), "--out", str(tmp_path / "out")]
    )
    pages = sorted((tmp_path / "out" / "accessories").glob("page-*.png"))
    assert [p.name for p in pages] == [f"page-000{n}.png" for n in range(1, 5)]
    assert Image.open(pages[0]).size == (1212, 1568)
    assert "no pages to render" in result.output
    assert "junk.pdf: corrupt" in result.output
    assert result.exit_code == 1


def test_render_options(tmp_path):
    pdf = CORPUS / "pdf" / "accessories.pdf"
    if not pdf.exists():
        pytest.skip("corpus not available")
    result = CliRunner().invoke(
        cli, ["render", str(pdf), "--out", str(tmp_path), "--dpi", "72", "--max-side", "700"]
    )
    assert result.exit_code == 0, result.output
    assert Image.open(tmp_path / "accessories" / "page-0001.png").size == (541, 700)
