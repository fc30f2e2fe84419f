"""Metadata end to end on the command line: sidecars and `--meta` at `drac ingest`, stored with
the document, `drac search --filter` with each operator, hits that carry their metadata, and
the refusals (reserved keys, hostile sidecars, links, bad filters), all printed escaped."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from drac.cli import _register_commands, cli

_register_commands()

TEXTS = {
    "policy.md": "# Holiday policy\n\nStaff take holiday in summer. Holiday requests go to HR.\n",
    "contract.md": "# Supplier contract\n\nThe holiday clause of the supplier contract.\n",
    "notes.md": "# Notes\n\nHoliday notes without any metadata at all.\n",
}
SIDECARS: dict[str, dict[str, Any]] = {
    "policy.md": {
        "dept": "hr",
        "year": 2021,
        "tags": ["policy", "eu"],
        "issued": "2021-06-30",
        "public": True,
    },
    "contract.md": {
        "dept": "legal",
        "year": 2019,
        "tags": ["contract"],
        "issued": {"value": {"type": "STRING", "stringValue": "2019-01-15"}},
        "public": False,
    },
}


def run(*args: str) -> tuple[int, str]:
    """Exit code and standard output (with `--json`, only the JSON); usage errors, which
    click writes to stderr, are in the output too."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout if result.exit_code != 2 else result.output


def write_sidecar(document: Path, attributes: dict[str, Any]) -> Path:
    sidecar = document.with_name(document.name + ".metadata.json")
    sidecar.write_text(json.dumps({"metadataAttributes": attributes}))
    return sidecar


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in TEXTS.items():
        (docs / name).write_text(text)
        if name in SIDECARS:
            write_sidecar(docs / name, SIDECARS[name])
    return docs


@pytest.fixture
def workspace(tmp_path: Path, folder: Path) -> str:
    ws = str(tmp_path / "ws")
    code, output = run("ingest", str(folder), "--workspace", ws, "--no-embed", "--json")
    assert code == 0, output
    report = json.loads(output)
    skipped = {Path(s["path"]).name: s["reason"] for s in report["skipped_entries"]}
    assert skipped == {
        f"{n}.metadata.json": "metadata sidecar (read with its document, never ingested itself)"
        for n in SIDECARS
    }
    assert len(report["outcomes"]) == 3
    return ws


def ingest_with_meta(tmp_path: Path, paths: list[Path], pairs: list[str]) -> str:
    """Ingests the paths offline without embedding, each pair given as one `--meta`;
    returns the workspace."""
    ws = str(tmp_path / "ws")
    meta = [arg for pair in pairs for arg in ("--meta", pair)]
    code, output = run("ingest", *map(str, paths), "--workspace", ws, "--no-embed", *meta)
    assert code == 0, output
    return ws


def search(ws: str, *filters: str, query: str = "holiday") -> list[dict[str, Any]]:
    args = ["search", query, "--workspace", ws, "--embedder", "none", "--json", "-k", "20"]
    for flt in filters:
        args += ["--filter", flt]
    code, output = run(*args)
    assert code == 0, output
    hits: list[dict[str, Any]] = json.loads(output)
    return hits


def sources(hits: list[dict[str, Any]]) -> set[str]:
    return {hit["source"] for hit in hits}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ((), {"policy.md", "contract.md", "notes.md"}),
        (("dept=hr",), {"policy.md"}),
        (("dept=hr|legal",), {"policy.md", "contract.md"}),
        (("year>=2020",), {"policy.md"}),
        (("year<2021",), {"contract.md"}),
        (("year=2019..2021",), {"policy.md", "contract.md"}),
        (("year=2020..",), {"policy.md"}),
        (("issued<2020-01-01",), {"contract.md"}),
        (("issued=2019-01-01..2019-12-31",), {"contract.md"}),
        (("tags=eu",), {"policy.md"}),
        (("public=false",), {"contract.md"}),
        (("dept=hr", "year<2020"), set()),
        (
            (
                '{"orAll": [{"equals": {"key": "dept", "value": "legal"}},'
                ' {"greaterThan": {"key": "year", "value": 2020}}]}',
            ),
            {"policy.md", "contract.md"},
        ),
        (("dept=finance",), set()),
    ],
)
def test_search_with_each_operator(
    workspace: str, filters: tuple[str, ...], expected: set[str]
) -> None:
    hits = search(workspace, *filters)
    assert sources(hits) == expected
    for hit in hits:
        wanted = SIDECARS.get(hit["source"], {})
        plain = {
            k: (v["value"]["stringValue"] if isinstance(v, dict) else v) for k, v in wanted.items()
        }
        assert hit["metadata"] == plain  # every hit carries its document's metadata


def test_meta_sets_and_overrides_metadata(tmp_path: Path, folder: Path) -> None:
    ws = ingest_with_meta(
        tmp_path,
        [folder / "policy.md", folder / "notes.md"],
        ["project=apollo", "year:=2030", "code=007"],
    )
    hits = {h["source"]: h["metadata"] for h in search(ws)}
    assert hits["notes.md"] == {"project": "apollo", "year": 2030, "code": "007"}
    assert hits["policy.md"]["year"] == 2030 and hits["policy.md"]["dept"] == "hr"
    assert sources(search(ws, "project=apollo", "year>2029")) == {"policy.md", "notes.md"}


def test_a_changed_sidecar_updates_an_unchanged_document(workspace: str, folder: Path) -> None:
    write_sidecar(folder / "notes.md", {"dept": "ops"})
    code, output = run(
        "ingest", str(folder / "notes.md"), "--workspace", workspace, "--no-embed", "--json"
    )
    assert code == 0, output
    (outcome,) = json.loads(output)["outcomes"]
    assert outcome["status"] == "UNCHANGED" and "metadata updated (1 key(s))" in outcome["warnings"]
    assert sources(search(workspace, "dept=ops")) == {"notes.md"}
    (folder / "notes.md.metadata.json").unlink()  # the sidecar is the file's truth: gone, gone
    assert run("ingest", str(folder / "notes.md"), "--workspace", workspace, "--no-embed")[0] == 0
    assert search(workspace, "dept=ops") == []


def test_a_bad_sidecar_fails_its_document_alone(tmp_path: Path, folder: Path) -> None:
    write_sidecar(folder / "notes.md", {"dept": "ops", "tenant": "beta"})
    ws = str(tmp_path / "ws")
    code, output = run("ingest", str(folder), "--workspace", ws, "--no-embed", "--json")
    assert code == 1
    outcomes = {Path(d["path"]).name: d for d in json.loads(output)["outcomes"]}
    failed = outcomes["notes.md"]
    assert failed["status"] == "FAILED"
    assert 'notes.md.metadata.json: key "tenant" is reserved' in failed["error"]
    assert outcomes["policy.md"]["status"] == "INDEXED"
    assert sources(search(ws)) == {"policy.md", "contract.md"}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{" * 20_000, "more than the 10 KiB limit"),
        (b'{"metadataAttributes": {"n": NaN}}', "not valid UTF-8 JSON"),
        (b'{"metadataAttributes": {"a\\u001b]0;pwned\\u0007": 1}}', "may hold only letters"),
        (b'{"metadataAttributes": {"a": {"$where": "1"}}}', "typed form"),
    ],
)
def test_hostile_sidecars_are_refused(tmp_path: Path, content: bytes, reason: str) -> None:
    document = tmp_path / "doc.md"
    document.write_text("# Doc\n\nSome text about the holiday.\n")
    (tmp_path / "doc.md.metadata.json").write_bytes(content)
    code, output = run(
        "ingest", str(document), "--workspace", str(tmp_path / "ws"), "--no-embed", "--json"
    )
    assert code == 1
    (outcome,) = json.loads(output)["outcomes"]
    assert outcome["status"] == "FAILED" and reason in outcome["error"]
    assert "doc.md.metadata.json" in outcome["error"]


def test_a_sidecar_link_is_never_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"metadataAttributes": {"password": "hunter2"}}))
    document = tmp_path / "doc.md"
    document.write_text("# Doc\n\nSome text about the holiday.\n")
    os.symlink(secret, tmp_path / "doc.md.metadata.json")
    code, output = run(
        "ingest", str(document), "--workspace", str(tmp_path / "ws"), "--no-embed", "--json"
    )
    assert code == 1
    (outcome,) = json.loads(output)["outcomes"]
    assert "a symbolic link" in outcome["error"] and "hunter2" not in output


def test_a_sidecar_named_on_the_command_line_is_not_a_document(
    tmp_path: Path, folder: Path
) -> None:
    named = [str(p) for p in sorted(folder.iterdir())]  # what a shell glob `docs/*` gives
    code, output = run(
        "ingest", *named, "--workspace", str(tmp_path / "ws"), "--no-embed", "--json"
    )
    assert code == 0, output
    report = json.loads(output)
    assert {Path(d["path"]).name for d in report["outcomes"]} == set(TEXTS)
    assert {Path(s["path"]).name for s in report["skipped_entries"]} == {
        f"{n}.metadata.json" for n in SIDECARS
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--meta", "tenant=beta"), "reserved"),
        (("--meta", "no value"), "is not key=value"),
        (("--meta", "a:=NaN"), "not JSON"),
    ],
)
def test_bad_meta_is_a_usage_error(
    tmp_path: Path, folder: Path, args: tuple[str, ...], message: str
) -> None:
    code, output = run("ingest", str(folder), "--workspace", str(tmp_path / "ws"), *args)
    assert code == 2 and message in output
    assert not (tmp_path / "ws").exists()  # refused before any work


@pytest.mark.parametrize(
    ("flt", "message"),
    [
        ("tenant=beta", "reserved"),
        ('{"equals": {"key": "document_id", "value": "x"}}', "reserved"),
        ("year>soon", "ISO 8601 date"),
        ("dept!=hr", "not supported"),
        ('{"orAll": []}', "at least 1"),
    ],
)
def test_bad_filters_are_usage_errors(workspace: str, flt: str, message: str) -> None:
    code, output = run(
        "search", "holiday", "--workspace", workspace, "--embedder", "none", "--filter", flt
    )
    assert code == 2 and message in output


def test_metadata_prints_escaped(tmp_path: Path) -> None:
    document = tmp_path / "doc.md"
    document.write_text("# Doc\n\nSome text about the holiday.\n")
    write_sidecar(document, {"title": "evil\x1b[2J\u202etxt.exe", "tags": ["a\x07", "b"]})
    ws = str(tmp_path / "ws")
    assert run("ingest", str(document), "--workspace", ws, "--no-embed")[0] == 0
    code, output = run("search", "holiday", "--workspace", ws, "--embedder", "none")
    assert code == 0, output
    assert "\x1b" not in output and "\u202e" not in output and "\x07" not in output
    assert "title=evil\\x1b[2J\\u202etxt.exe" in output and "tags=a\\x07|b" in output
    hits = search(ws)
    assert hits[0]["metadata"]["title"] == "evil\x1b[2J\u202etxt.exe"  # JSON keeps the text


def test_show_prints_and_exports_the_metadata(workspace: str) -> None:
    code, output = run("show", "policy.md", "--workspace", workspace)
    assert code == 0, output
    assert "metadata dept=hr year=2021 tags=policy|eu issued=2021-06-30 public=true" in output
    code, output = run("show", "contract.md", "--workspace", workspace, "--json")
    assert json.loads(output)["document"]["metadata"]["issued"] == "2019-01-15"


def test_a_name_too_long_for_a_sidecar_has_none(tmp_path: Path) -> None:
    document = tmp_path / ("é" * 125 + "xy.md")  # 255 bytes: no room for ".metadata.json"
    document.write_text("# Doc\n\nSome text about the holiday.\n")
    code, output = run(
        "ingest",
        str(document),
        "--workspace",
        str(tmp_path / "ws"),
        "--no-embed",
        "--meta",
        "dept=hr",
        "--json",
    )
    assert code == 0, output
    assert json.loads(output)["outcomes"][0]["status"] == "INDEXED"
    assert search(str(tmp_path / "ws"), "dept=hr")[0]["metadata"] == {"dept": "hr"}


def test_export_lines_carry_exactly_their_documents_metadata(tmp_path: Path, folder: Path) -> None:
    ws = ingest_with_meta(tmp_path, [folder], ["project=apollo", "year:=2030"])
    code, output = run("export", "--workspace", ws)
    assert code == 0, output
    lines = [json.loads(line) for line in output.splitlines()]
    by_source: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_source.setdefault(line["source"], []).append(line["metadata"])
    policy = {**SIDECARS["policy.md"], "project": "apollo", "year": 2030}  # --meta over sidecar
    contract = {
        **SIDECARS["contract.md"],
        "issued": "2019-01-15",
        "project": "apollo",
        "year": 2030,
    }
    assert by_source["policy.md"] and all(m == policy for m in by_source["policy.md"])
    assert by_source["contract.md"] and all(m == contract for m in by_source["contract.md"])
    assert by_source["notes.md"] and all(
        m == {"project": "apollo", "year": 2030} for m in by_source["notes.md"]
    )


def test_export_of_a_document_without_metadata_says_so(tmp_path: Path) -> None:
    (tmp_path / "plain.md").write_text("# Plain\n\nNo metadata here.\n")
    ws = str(tmp_path / "ws")
    assert run("ingest", str(tmp_path / "plain.md"), "--workspace", ws, "--no-embed")[0] == 0
    code, output = run("export", "--workspace", ws)
    assert code == 0 and output
    assert all(json.loads(line)["metadata"] == {} for line in output.splitlines())
