"""Terminal injection: document text and file names reach no terminal raw.

A document whose name and text hold escape sequences (clear screen, window title, colours,
8-bit CSI), a carriage return, bidi overrides and a newline is ingested; the output of every
command that prints document-derived text must hold none of those bytes and no forged row,
and `--json` output stays valid JSON that decodes to the original text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pdfs import Text, make_pdf

from drac.cli import _register_commands, cli
from drac.local.workspace import Workspace
from drac.terminal import json_text, markup, printable

_register_commands()

HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x1b[31mred\x1b[0m\x9b31m\u202egpj.\u2066x\u2069\r\x08"
FORGED = "forged\nINDEXED  row"
NAME = f"evil{HOSTILE}{FORGED}.md"
EMPTY_NAME = f"empty{HOSTILE}.md"
PDF_NAME = f"page{HOSTILE}.pdf"
TEXT = (
    f"# Title {HOSTILE} heading\n\nBody words {HOSTILE} findme paragraph.\n\n"
    f"## Second\n\nMore findme words {HOSTILE} here.\n\n"
    + "Plain filler words keep the share of control characters low. " * 80
    + "\n"
)
FORBIDDEN = ("\x1b", "\x07", "\x9b", "\r", "\x08", "\x00", "\u202e", "\u2066", "\u2069")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def assert_clean(output: str, command: str) -> None:
    for byte in FORBIDDEN:
        assert byte not in output, f"{command}: raw {byte!r} in {output!r}"
    assert not any(line.lstrip().startswith("INDEXED  row") for line in output.splitlines()), (
        f"{command}: a forged row in {output!r}"
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("terminal")
    folder = root / "docs"
    folder.mkdir()
    (folder / NAME).write_text(TEXT, encoding="utf-8")
    (folder / EMPTY_NAME).write_text("", encoding="utf-8")
    ws = root / "ws"
    code, out = run("ingest", str(folder), "-w", str(ws))
    assert code == 1  # the empty document failed
    assert_clean(out, "ingest")
    assert "\\x1b[2J" in out  # shown, escaped
    return ws, folder


def test_every_command_prints_no_raw_control_or_bidi_character(
    workspace: tuple[Path, Path], tmp_path: Path
) -> None:
    ws, folder = workspace
    w = ["-w", str(ws)]
    pdf = tmp_path / PDF_NAME
    pdf.write_bytes(make_pdf([(200, 200, [Text("hello", 20, 100)])]))
    commands = [
        ["status", *w],
        ["search", "findme", *w],
        ["show", NAME, *w],
        ["show", NAME, "--markdown", *w],
        ["replan", "--target-chars", "300", *w],
        ["cost", *w],
        ["inspect", "--out", str(tmp_path / "report"), *w],
        ["show", f"nothing{HOSTILE}", *w],
        ["render", str(pdf), "--out", str(tmp_path / "pages")],
        ["render", str(tmp_path / f"missing{HOSTILE}.pdf"), "--out", str(tmp_path / "pages")],
        ["remove", str(folder / EMPTY_NAME), *w],
        ["remove", str(folder / f"never{HOSTILE}.md"), *w],
    ]
    for command in commands:
        _, out = run(*command)
        assert_clean(out, " ".join(command[:2]))
    _, out = run("status", *w)
    assert "\\u202e" in out and "\\n" in out  # visible, on the document's own row


def test_markdown_keeps_its_lines_and_loses_only_the_controls(
    workspace: tuple[Path, Path],
) -> None:
    ws, _ = workspace
    code, out = run("show", NAME, "--markdown", "-w", str(ws))
    assert code == 0
    assert out.splitlines()[0].startswith("# Title \\x1b[2J")
    workspace_ = Workspace(ws, create=False)
    [record] = [d for d in workspace_.documents() if d.source == NAME]
    stored = workspace_.get_markdown(record.document_id)
    workspace_.close()
    assert out.count("\n") == stored.count("\n") and "Plain filler words" in out


def test_json_output_is_valid_and_decodes_to_the_original_text(
    workspace: tuple[Path, Path],
) -> None:
    ws, _ = workspace
    w = ["-w", str(ws)]
    _, out = run("status", "--json", *w)
    assert_clean(out, "status --json")
    assert NAME in {d["source"] for d in json.loads(out)}
    _, out = run("search", "findme", "--json", *w)
    assert_clean(out, "search --json")
    hits = json.loads(out)
    assert hits and all(hit["source"] == NAME for hit in hits)
    assert any("\x1b[2J" in hit["text"] and "\u202e" in hit["text"] for hit in hits)
    _, out = run("export", *w)
    assert_clean(out, "export")
    chunks = [json.loads(line) for line in out.splitlines()]
    assert any("\x1b]0;pwned\x07" in chunk["text"] for chunk in chunks)
    _, out = run("show", NAME, "--json", *w)
    assert_clean(out, "show --json")
    assert json.loads(out)["document"]["source"] == NAME


def test_the_one_function_escapes_each_kind_visibly() -> None:
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("x\u202ey\u2066z\u2069") == "x\\u202ey\\u2066z\\u2069"
    assert printable("one\ntwo\tthree\r") == "one\\ntwo\\tthree\\r"
    assert printable("one\ntwo\tthree\r", lines=True) == "one\ntwo\tthree\\r"
    assert printable("\x9b\x85\u200b\ufeff\u2028") == "\\x9b\\x85\\u200b\\ufeff\\u2028"
    assert printable("caf\udce9") == "caf\\udce9"  # a byte kept by surrogateescape
    assert printable("Zürich, 東京, مرحبا, emoji 😀") == "Zürich, 東京, مرحبا, emoji 😀"
    assert markup("[bold]x\x1b") == "\\[bold]x\\x1b"
    assert json.loads(json_text(json.dumps("a\x9b\u202e\U000e0001b", ensure_ascii=False))) == (
        "a\x9b\u202e\U000e0001b"
    )
    assert "\u202e" not in json_text(json.dumps("\u202e", ensure_ascii=False))


def test_eval_prints_a_hostile_chunk_set_name_escaped(tmp_path: Path) -> None:
    queries = tmp_path / "queries.csv"
    queries.write_text(
        "Enterprise Name,Query Type,Query,Supporting Facts\n"
        'Acme,Boolean,Can I return it?,"[{""filename"": ""a.md"", ""text"": ""Returns""}]"\n'
    )
    other = tmp_path / f"set{HOSTILE}.jsonl"
    other.write_text(json.dumps({"source": "a.md", "text": "Returns are accepted."}) + "\n")
    args = ["eval", str(queries), "--compare", str(other), "--embedder", "none"]
    code, out = run(*args, "-w", str(tmp_path / "none"))
    assert code == 0, out
    assert_clean(out, "eval")
    assert "set\\x1b[2J" in out
