"""A damaged workspace explains itself: each kind of damage gives every command either its
normal result or ONE line naming the damaged file and what to do, never a traceback, and
`drac check` lists the damage with its fix."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from pdfs import Text, make_pdf

from drac.cli import _register_commands, cli

_register_commands()


def run(*args: str) -> tuple[int, str, BaseException | None]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output, result.exception


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("damage")
    docs = root / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text(
        "# Notes\n\nReturns are accepted within thirty days.\n\n## More\n\nExchanges too.\n"
    )
    (docs / "page.pdf").write_bytes(make_pdf([(300, 300, [Text("Warranty terms", 20, 100)])]))
    code, out, _ = run("ingest", str(docs), "-w", str(root / "ws"))
    assert code == 0, out
    return root


def _document_folder(ws: Path, name: str) -> Path:
    with sqlite3.connect(ws / "drac.sqlite") as conn:
        [(document_id,)] = conn.execute(
            "SELECT document_id FROM documents WHERE source = ?", (name,)
        )
    return ws / "documents" / document_id


def _sql(ws: Path, statement: str) -> None:
    conn = sqlite3.connect(ws / "drac.sqlite")
    with conn:
        conn.execute(statement)
    conn.close()


def _corrupt_pages(ws: Path) -> None:
    path = ws / "drac.sqlite"
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(page * 2, len(data), page * 3):  # every third page from the third on
        data[start : start + page] = b"\xa5" * min(page, len(data) - start)
    path.write_bytes(bytes(data))


@dataclass(frozen=True)
class Damage:
    label: str
    apply: Callable[[Path], None]
    names: str  # what the one line must name
    failing: frozenset[str]  # commands that cannot do their work (the others must)


ALL = frozenset({"status", "show", "markdown", "search", "export", "replan", "inspect", "ingest"})
DAMAGES = [
    Damage(
        "not a database",
        lambda ws: (ws / "drac.sqlite").write_text("these are not the bytes of a database\n" * 99),
        "drac.sqlite",
        ALL,
    ),
    Damage("malformed database", _corrupt_pages, "drac.sqlite", ALL),
    Damage("empty database", lambda ws: (ws / "drac.sqlite").write_bytes(b""), "drac.sqlite", ALL),
    Damage(
        "truncated chunks file",
        lambda ws: (_document_folder(ws, "notes.md") / "chunks" / "v0001.jsonl").write_text(
            '{"document_id": "'
        ),
        "v0001.jsonl",
        frozenset(),  # inspect marks the document and writes the rest
    ),
    Damage(
        "deleted document.md",
        lambda ws: (_document_folder(ws, "notes.md") / "document.md").unlink(),
        "document.md",
        frozenset({"markdown"}),
    ),
    Damage(
        "bad plan file",
        lambda ws: (_document_folder(ws, "notes.md") / "plans" / "v0001.json").write_text("{"),
        "v0001.json",
        frozenset(),
    ),
    Damage(
        "bad element row",
        lambda ws: _sql(ws, "UPDATE elements SET data = '{\"id\": ' WHERE seq = 1"),
        "element",
        frozenset({"show", "replan"}),  # inspect marks that document and writes the rest
    ),
    Damage(
        "bad chunk row",
        lambda ws: _sql(ws, "UPDATE chunks SET data = 'not json' WHERE seq = 0"),
        "chunk",
        frozenset({"status", "search", "export", "inspect"}),  # a re-plan writes it anew
    ),
]


def _commands(ws: Path, tmp: Path) -> dict[str, list[str]]:
    w = ["-w", str(ws)]
    extra = tmp / "extra.md"
    extra.write_text("# Extra\n\nAnother document about shipping.\n")
    return {
        "status": ["status", *w],
        "show": ["show", "notes.md", *w],
        "markdown": ["show", "notes.md", "--markdown", *w],
        "search": ["search", "returns", *w],
        "export": ["export", *w],
        "replan": ["replan", "--target-chars", "500", *w],
        "inspect": ["inspect", "--out", str(tmp / "report"), *w],
        "ingest": ["ingest", str(extra), *w],
    }


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda damage: damage.label)
def test_each_kind_of_damage_gives_one_line_naming_the_file(
    pristine: Path, tmp_path: Path, damage: Damage
) -> None:
    ws = tmp_path / "ws"
    for name in _commands(ws, tmp_path):
        shutil.rmtree(ws, ignore_errors=True)
        shutil.copytree(pristine / "ws", ws)  # each command meets the damage afresh
        damage.apply(ws)
        code, out, exception = run(*_commands(ws, tmp_path)[name])
        assert exception is None or isinstance(exception, SystemExit), (name, out, exception)
        assert "Traceback" not in out and "unexpected error" not in out, (name, out)
        errors = [line for line in out.splitlines() if line.startswith(("Error:", "FAILED "))]
        if name in damage.failing:
            assert code == 1 and len(errors) == 1, (name, out)
            assert damage.names in errors[0], (name, errors[0])
            assert "drac " in errors[0] or "restore" in errors[0], (name, errors[0])
        else:
            assert code == 0 and not errors, (name, out)
    if damage.names != "drac.sqlite" or damage.label == "malformed database":
        code, out, _ = run("check", "-w", str(ws))
        assert code == 1 and damage.names in out, out


def test_check_finds_nothing_wrong_in_a_sound_workspace(pristine: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(pristine / "ws", ws)
    code, out, _ = run("check", "-w", str(ws))
    assert code == 0 and "no problems" in out, out


def test_check_lists_several_problems_each_with_its_fix(pristine: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(pristine / "ws", ws)
    (_document_folder(ws, "notes.md") / "document.md").unlink()
    (_document_folder(ws, "page.pdf") / "plans" / "v0001.json").write_text("{")
    (ws / "documents" / "0123456789abcdef0123").mkdir()
    _sql(ws, "DELETE FROM bm25_docs")
    code, out, _ = run("check", "-w", str(ws), "--json")
    assert code == 1
    problems = json.loads(out)["problems"]
    files = " ".join(problem["file"] for problem in problems)
    assert "document.md" in files and "v0001.json" in files and "0123456789abcdef0123" in files
    assert any("index" in problem["problem"] for problem in problems)
    assert all(problem["fix"] for problem in problems)


def test_check_repair_writes_lost_files_again_and_removes_leftovers(
    pristine: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(pristine / "ws", ws)
    notes = _document_folder(ws, "notes.md")
    original_plan = (notes / "plans" / "v0001.json").read_text()
    original_chunks = (notes / "chunks" / "v0001.jsonl").read_text()
    (notes / "plans" / "v0001.json").write_text("{")
    (notes / "chunks" / "v0001.jsonl").unlink()
    (ws / "documents" / "0123456789abcdef0123").mkdir()
    (ws / "tmp").mkdir(exist_ok=True)
    (ws / "tmp" / ".v0001.jsonl.k1ll3d.tmp").write_text("half")
    code, out, _ = run("check", "-w", str(ws))
    assert code == 1 and out.count("check --repair") >= 3, out
    code, out, _ = run("check", "--repair", "-w", str(ws))
    assert code == 0 and "no problems" in out, out
    assert json.loads((notes / "plans" / "v0001.json").read_text()) == json.loads(original_plan)
    assert (notes / "chunks" / "v0001.jsonl").read_text() == original_chunks
    assert not (ws / "documents" / "0123456789abcdef0123").exists()
    assert list((ws / "tmp").iterdir()) == []
