"""The drac CLI end to end on real files: ingest, status, search, show, export, replan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from drac.cli import _register_commands, cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"
EXPORT_FIELDS = {
    "document_id",
    "source",
    "chunk_id",
    "plan_version",
    "text",
    "breadcrumb",
    "element_ids",
    "pages",
}

_register_commands()


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture()
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(EXAMPLES / "purchasing.md", folder / "purchasing.md")
    (folder / "notes.txt").write_text("Plain notes.\n\nA second paragraph about returns.\n")
    (folder / "LICENSE").write_text("not a document ending, skipped in folder walks")
    return folder


def export(workspace: Path) -> list[dict]:
    code, out = run("export", "-w", str(workspace))
    assert code == 0
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_ingest_export_search_show(docs: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    code, out = run("ingest", str(docs), "-w", str(ws), "--json")
    assert code == 0, out
    summary = json.loads(out[out.index("{") :])
    assert summary["failed"] == 0
    assert {Path(o["path"]).name for o in summary["outcomes"]} == {"purchasing.md", "notes.txt"}

    chunks = export(ws)
    assert chunks and all(chunk.keys() >= EXPORT_FIELDS for chunk in chunks)
    source = (docs / "purchasing.md").read_text()
    for chunk in (c for c in chunks if c["source"] == "purchasing.md"):
        body = chunk["text"][len(chunk["breadcrumb"]) :].lstrip("\n")
        assert chunk["text"].startswith(chunk["breadcrumb"])
        assert all(line in source for line in body.splitlines())
        assert chunk["pages"] == [1]

    code, out = run("search", "second paragraph returns", "-k", "1", "-w", str(ws), "--json")
    assert code == 0
    assert json.loads(out)[0]["source"] == "notes.txt"

    code, out = run("show", "purchasing.md", "-w", str(ws))
    assert code == 0 and "section" in out and "v1" in out
    code, out = run("show", "purchasing", "-w", str(ws), "--markdown")
    assert code == 0 and out == source

    code, out = run("status", "-w", str(ws), "--json")
    assert {d["status"] for d in json.loads(out)} == {"INDEXED"}


def test_reingest_is_unchanged_and_replan_makes_a_new_version(docs: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert run("ingest", str(docs), "-w", str(ws))[0] == 0
    code, out = run("ingest", str(docs), "-w", str(ws), "--json")
    assert {o["status"] for o in json.loads(out[out.index("{") :])["outcomes"]} == {"UNCHANGED"}

    before = export(ws)
    (docs / "purchasing.md").unlink()  # replan must not need the sources
    code, out = run("replan", "-w", str(ws), "--target-chars", "300", "--json")
    assert code == 0, out
    after = export(ws)
    assert {c["plan_version"] for c in after} == {2}
    assert len(after) > len(before)
    code, out = run("show", "purchasing.md", "-w", str(ws), "--json")
    assert [v["version"] for v in json.loads(out)["versions"]] == [1, 2]


def test_bad_inputs_fail_alone_with_reasons(docs: Path, tmp_path: Path) -> None:
    (docs / "empty.md").write_bytes(b"")
    (docs / "junk.md").write_bytes(bytes(range(256)) * 20)
    ws = tmp_path / "ws"
    code, out = run("ingest", str(docs), str(tmp_path / "missing.pdf"), "-w", str(ws), "--json")
    assert code == 1
    outcomes = {Path(o["path"]).name: o for o in json.loads(out[out.index("{") :])["outcomes"]}
    assert outcomes["purchasing.md"]["status"] == "INDEXED"
    assert outcomes["notes.txt"]["status"] == "INDEXED"
    for name in ("empty.md", "junk.md", "missing.pdf"):
        assert outcomes[name]["status"] == "FAILED"
        assert outcomes[name]["error"]
    assert "no such file" in outcomes["missing.pdf"]["error"]


def test_unknown_strategy_and_missing_workspace_are_usage_errors(tmp_path: Path) -> None:
    code, out = run(
        "ingest", str(EXAMPLES / "purchasing.md"), "-w", str(tmp_path / "w"), "-s", "nope"
    )
    assert code == 2 and "unknown strategy" in out
    code, out = run("export", "-w", str(tmp_path / "nowhere"))
    assert code == 1 and "no drac workspace" in out
    code, out = run("replan", "-w", str(tmp_path / "w2"), "--planner", "llm")
    assert code == 2 and "needs a model" in out


def test_a_second_writer_on_the_same_workspace_stops_with_a_clear_message(
    docs: Path, tmp_path: Path
) -> None:
    from drac.local.lock import writer_lock

    ws = tmp_path / "ws"
    with writer_lock(ws):
        code, out = run("ingest", str(docs), "-w", str(ws))
    assert code == 1
    assert "being written by drac pid" in out
    assert run("ingest", str(docs), "-w", str(ws))[0] == 0  # released afterwards
