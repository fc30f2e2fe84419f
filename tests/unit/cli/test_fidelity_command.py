"""`drac eval-conversion` scores renditions found beside a source.md against it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from pdfs import Text, make_pdf

from drac.cli import cli


def _folder(root: Path) -> Path:
    document = root / "guide"
    document.mkdir()
    (document / "source.md").write_text(
        "# Refund Guide\n\nRefunds are paid within thirty days of the request.\n",
        encoding="utf-8",
    )
    lines = [
        Text("Refund Guide", 72, 720, 20, "Helvetica-Bold"),
        Text("Refunds are paid within thirty days of the", 72, 690),
        Text("request.", 72, 678),
    ]
    (document / "guide.pdf").write_bytes(make_pdf([(612, 792, lines)]))
    (document / "notes.md").write_text("not a rendition", encoding="utf-8")
    return root


def test_the_table_and_the_json_report_the_rendition_score(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    shown = CliRunner().invoke(cli, ["eval-conversion", str(root)])
    assert shown.exit_code == 0, shown.output
    assert "1 renditions of 1 documents" in shown.output
    assert "| pdf | 1 | 1.0000 | 1.0000 | 1.0000 | 1.000 (1/1) |" in shown.output
    as_json = CliRunner().invoke(cli, ["eval-conversion", str(root), "--json"])
    records = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [(r["document"], r["format"]) for r in records] == [("guide", "pdf")]
    assert records[0]["word_recall"] == 1.0 and records[0]["paragraphs_split"] == 0


def test_a_folder_without_ground_truth_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(make_pdf([(612, 792)]))
    result = CliRunner().invoke(cli, ["eval-conversion", str(tmp_path)])
    assert result.exit_code == 1 and "no ground truth" in result.output


def test_a_hostile_folder_name_reaches_the_terminal_without_control_characters(
    tmp_path: Path,
) -> None:
    root = tmp_path / "corp\x1b[2J\x07"
    root.mkdir()
    _folder(root)
    shown = CliRunner().invoke(cli, ["eval-conversion", str(root)])
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert "corp?[2J? / pdf" in shown.output
