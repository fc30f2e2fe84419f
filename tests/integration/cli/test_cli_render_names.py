"""`drac render` writes every page below --out, whatever the file is called."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from pdfs import Text, make_pdf

from drac.cli import _register_commands, cli

_register_commands()


@pytest.mark.parametrize("name", ["...pdf", "..pdf", ".pdf", "-.pdf"])
def test_a_file_named_with_dots_renders_inside_the_out_folder(tmp_path: Path, name: str) -> None:
    source = tmp_path / "in" / name
    source.parent.mkdir()
    source.write_bytes(make_pdf([(200, 200, [Text("hello", 20, 100)])]))
    parent = tmp_path / "parent"
    out = parent / "out"
    result = CliRunner().invoke(cli, ["render", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert [p.name for p in parent.iterdir()] == ["out"]
    [folder] = out.iterdir()
    assert folder.is_dir() and folder.name not in ("", ".", "..")
    assert [p.name for p in folder.iterdir()] == ["page-0001.png"]


def test_render_help_says_what_each_option_is() -> None:
    result = CliRunner().invoke(cli, ["render", "--help"])
    text = " ".join(result.output.split())
    assert "DIRECTORY folder" not in text
    assert "Folder to write" in text
    assert "--dpi" in text and "Resolution" in text
    assert "--max-side" in text and "longest side" in text
