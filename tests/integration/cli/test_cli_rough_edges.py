"""The rough edges a newcomer hits in the first hour (issue 19), each reproduced first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from drac.cli import _register_commands, cli

_register_commands()
DRAC = [sys.executable, "-c", "from drac.cli import main; main()"]
NOTE = "# Returns\n\nReturns are accepted within thirty days of purchase.\n"


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner(env=env).invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_bedrock_without_a_region_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(NOTE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env |= {"AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": "/x"}
    result = subprocess.run(
        [*DRAC, "ingest", str(tmp_path / "a.md"), "--model", "bedrock", "-w", str(tmp_path / "w")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "AWS region" in result.stderr and "AWS_REGION" in result.stderr
    assert "unexpected error" not in result.stderr


def _two_same_names(tmp_path: Path) -> Path:
    for folder, text in (("one", NOTE), ("two", NOTE.replace("thirty", "sixty"))):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "Gold Loan.md").write_text(text)
    (tmp_path / "Aventro Spark Hatchback.md").write_text("# Car\n\nA small car.\n")
    (tmp_path / " leading.md").write_text("# Lead\n\nA name with a leading space.\n")
    ws = tmp_path / "ws"
    code, out = run("ingest", str(tmp_path / "one"), str(tmp_path / "two"),
                    str(tmp_path / "Aventro Spark Hatchback.md"), str(tmp_path / " leading.md"),
                    "-w", str(ws))  # fmt: skip
    assert code == 0, out
    return ws


def test_remove_takes_a_name_an_id_or_a_path_as_status_and_show_do(tmp_path: Path) -> None:
    ws = _two_same_names(tmp_path)
    w = ["-w", str(ws)]
    code, out = run("remove", "Aventro Spark Hatchback.md", *w)
    assert code == 0 and "left search" in out, out
    code, out = run("remove", "Gold Loan.md", *w)
    assert code == 1 and "matches 2 documents" in out
    [first] = [d for d in json.loads(run("status", "--json", *w)[1]) if "/one/" in d["source_path"]]
    code, out = run("remove", first["document_id"], *w)
    assert code == 0 and "left search" in out, out
    code, out = run("remove", str(tmp_path / "two" / "Gold Loan.md"), *w)
    assert code == 0
    live = [d for d in json.loads(run("status", "--json", *w)[1]) if d["status"] == "INDEXED"]
    assert [d["source"] for d in live] == [" leading.md"]


def test_commands_in_a_subfolder_find_the_workspace_above(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(NOTE)
    (tmp_path / "deep" / "er").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "DRAC_WORKSPACE"}
    subprocess.run([*DRAC, "ingest", "a.md", "-w", ".drac"], cwd=tmp_path, check=True,
                   capture_output=True, env=env)  # fmt: skip
    status = subprocess.run([*DRAC, "status"], cwd=tmp_path / "deep" / "er",
                            capture_output=True, text=True, env=env)  # fmt: skip
    assert status.returncode == 0 and "1 INDEXED" in status.stdout, status.stderr
    assert not (tmp_path / "deep" / "er" / ".drac").exists()


def test_ingesting_a_missing_file_makes_no_workspace_and_says_it_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    code, out = run("ingest", str(tmp_path / "nothere.pdf"), "-w", str(ws))
    assert code == 1 and out.count("no such file or folder") == 1, out
    assert not ws.exists() and "0/0" not in out


def test_a_non_pdf_named_pdf_says_what_it_was_taken_for(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(bytes(range(256)) * 12)
    code, out = run("ingest", str(tmp_path / "report.pdf"), "-w", str(tmp_path / "ws"))
    assert code == 1
    assert "named .pdf but it is not a PDF" in out and "%PDF-" in out, out


def test_status_tells_same_named_documents_apart_and_shows_a_leading_space(
    tmp_path: Path,
) -> None:
    ws = _two_same_names(tmp_path)
    code, out = run("status", "-w", str(ws))
    assert code == 0
    assert "one/Gold Loan.md" in out and "two/Gold Loan.md" in out, out
    assert "' leading.md'" in out or '" leading.md"' in out


def test_status_notes_are_cut_at_word_boundaries(tmp_path: Path) -> None:
    from drac.cli.query_commands import short_note

    note = "the converter could not read page 3 because its content stream is damaged " * 3
    short = short_note(note, 80)
    assert len(short) <= 80 and short.endswith("…")
    assert note.startswith(short[:-1].rstrip()) and note[len(short[:-1].rstrip())] == " "


def test_the_workspace_remembers_its_strategy_after_a_replan(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(NOTE)
    (tmp_path / "b.md").write_text(NOTE.replace("thirty", "ninety"))
    w = ["-w", str(tmp_path / "ws")]
    assert run("ingest", str(tmp_path / "a.md"), *w)[0] == 0
    assert run("replan", "--target-chars", "800", *w)[0] == 0
    assert run("ingest", str(tmp_path / "b.md"), *w)[0] == 0
    code, out = run("show", "b.md", "--json", *w)
    assert json.loads(out)["plan"]["strategy"]["target_chars"] == 800
    code, out = run("status", *w)
    assert code == 0 and "target 800" in out and "remembered" in out, out


def test_export_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    words = "Words about refunds. " * 40
    paragraphs = "".join(f"## Part {n}\n\n{words}\n\n" for n in range(300))
    (tmp_path / "big.md").write_text(f"# Big\n\n{paragraphs}")
    ws = str(tmp_path / "ws")
    subprocess.run([*DRAC, "ingest", str(tmp_path / "big.md"), "-w", ws], check=True,
                   capture_output=True)  # fmt: skip
    export = subprocess.Popen([*DRAC, "export", "-w", ws], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)  # fmt: skip
    assert export.stdout is not None and export.stderr is not None
    export.stdout.readline()
    export.stdout.close()  # as `| head -1` does
    assert export.wait(timeout=60) == 0
    assert export.stderr.read() == b""


def test_a_mistyped_command_gets_a_suggestion() -> None:
    result = subprocess.run([*DRAC, "serch", "x"], capture_output=True, text=True)
    assert result.returncode == 2 and "Did you mean 'search'" in result.stderr, result.stderr


def test_search_in_an_empty_workspace_says_nothing_is_ingested(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("")  # fails: the workspace exists, with no document
    run("ingest", str(tmp_path / "a.md"), "-w", str(tmp_path / "ws"))
    code, out = run("search", "refund", "-w", str(tmp_path / "ws"))
    assert code == 0 and "no documents ingested yet" in out, out


@pytest.mark.parametrize("versions", [(1,), (1, 2)])
def test_the_inspect_header_names_the_plan_versions_plainly(
    tmp_path: Path, versions: tuple[int, ...]
) -> None:
    (tmp_path / "a.md").write_text(NOTE)
    w = ["-w", str(tmp_path / "ws")]
    run("ingest", str(tmp_path / "a.md"), *w)
    if 2 in versions:
        run("replan", "--target-chars", "500", *w)
    run("inspect", "--out", str(tmp_path / "r"), *w)
    [page] = [p for p in (tmp_path / "r").glob("*.html") if p.name != "index.html"]
    html = page.read_text()
    assert "plan v1 of v1" not in html and "of v1 v2" not in html
    last = versions[-1]
    assert f"plan v{last} of {len(versions)}" in html
