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


def test_documents_rendered_at_once_match_one_at_a_time_and_a_hostile_one_fails_alone(tmp_path):
    from reliability.hostile_pdf import page_tree_loop_pdf

    from drac.documents.pdf.render import render_pages

    inputs = tmp_path / "in"
    inputs.mkdir()
    names = ["accessories.pdf", "contact_info.pdf", "loop.pdf", "environmental_policy.pdf"]
    for name in names:
        source = CORPUS / "pdf" / name
        data = page_tree_loop_pdf() if name == "loop.pdf" else source.read_bytes()
        (inputs / name).write_bytes(data)
    runs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        result = CliRunner().invoke(
            cli, ["render", *(str(inputs / n) for n in names), "--out", str(out), "-j", jobs]
        )
        assert result.exit_code == 1, result.output
        said = [line for line in result.output.splitlines() if ".pdf:" in line]
        assert [line.split(":")[0] for line in said] == names  # in the files' order
        assert "loop.pdf: page 1 cannot be read" in result.output
        assert "1 of 4 documents failed" in result.output
        runs[jobs] = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.png"))}
    assert runs["1"] == runs["2"]
    for name in ("accessories", "contact_info", "environmental_policy"):
        alone = [page.png for page in render_pages((inputs / f"{name}.pdf").read_bytes())]
        written = [data for path, data in runs["2"].items() if path.parent.name == name]
        assert written == alone and alone
