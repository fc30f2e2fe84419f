"""`drac ingest --dry-run` and `drac quote s3://...`: a quote, and nothing written anywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pdfs import Text, make_pdf

from drac.cli import _register_commands, cli
from drac.costs.prices import PriceTable
from drac.costs.quote import QuoteModels, quote_document
from drac.models import Strategy

_register_commands()
REGION = "us-east-1"
GEMMA = "google.gemma-3-27b-it"


def _pdf(pages: int) -> bytes:
    return make_pdf([(612, 792, [Text(f"page {n}", 72, 700)]) for n in range(1, pages + 1)])


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No drac settings from the machine: an empty folder to run in, no DRAC_* variables."""
    for name in (
        "DRAC_MODEL",
        "DRAC_CONFIG",
        "DRAC_WORKSPACE",
        "DRAC_VISION_MODEL_ID",
        "DRAC_PLANNER_MODEL_ID",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _files(root: Path) -> set[Path]:
    return {path for path in root.rglob("*")}


def test_a_dry_run_prints_the_quote_and_writes_nothing(clean_env: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.pdf").write_bytes(_pdf(7))
    (docs / "notes.md").write_text("# Notes\n\nSome text.\n", encoding="utf-8")
    before = _files(tmp_path)
    workspace = tmp_path / "ws"
    result = CliRunner().invoke(
        cli, ["ingest", "docs", "--dry-run", "--workspace", str(workspace), "--model", "bedrock"]
    )
    assert result.exit_code == 0, result.output
    assert _files(tmp_path) == before  # no workspace, no .drac, no file of any kind
    assert not workspace.exists() and not (clean_env / ".drac").exists()
    line = next(line for line in result.output.splitlines() if "report.pdf" in line)
    cells = [cell.strip() for cell in line.split("│")]
    assert cells[2:5] == ["pdf", "7", "2"]  # format, pages, batches
    expected = quote_document(
        _pdf(7),
        "report.pdf",
        models=QuoteModels(conversion=GEMMA),
        prices=PriceTable(),
        strategy=Strategy(),
    )
    assert cells[5] == f"~{expected.input_tokens:,}"
    assert "google.gemma-3-27b-it" in result.output
    assert any(
        line.split("│")[1].strip() == "total" for line in result.output.splitlines() if "│" in line
    )


def test_dry_run_json_has_each_document_and_the_totals(clean_env: Path, tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(_pdf(6))
    (tmp_path / "b.pdf").write_bytes(_pdf(1))
    result = CliRunner().invoke(
        cli,
        [
            "ingest",
            str(tmp_path / "a.pdf"),
            str(tmp_path / "b.pdf"),
            "--dry-run",
            "--json",
            "--model",
            "bedrock",
        ],
    )
    assert result.exit_code == 0, result.output
    quote = json.loads(result.output)["quote"]
    assert [(d["pages"], d["batches"]) for d in quote["documents"]] == [(6, 2), (1, 1)]
    assert (quote["pages"], quote["batches"]) == (7, 3)
    assert quote["dollars"] == pytest.approx(
        sum(
            d["conversion"]["dollars"] + d["planning"]["dollars"] + d["embedding"]["dollars"]
            for d in quote["documents"]
        )
    )
    assert quote["dollars"] > 0
    assert quote["models"]["conversion"] == GEMMA


def test_an_offline_dry_run_costs_nothing(clean_env: Path, tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(_pdf(3))
    result = CliRunner().invoke(cli, ["ingest", str(tmp_path / "a.pdf"), "--dry-run", "--json"])
    quote = json.loads(result.output)["quote"]
    assert (quote["pages"], quote["batches"], quote["dollars"]) == (3, 0, 0.0)


def test_a_hostile_file_name_is_escaped_in_the_table(clean_env: Path, tmp_path: Path) -> None:
    name = "evil\x1b]0;owned\x07[bold]x.pdf"
    (tmp_path / name).write_bytes(_pdf(1))
    result = CliRunner().invoke(cli, ["ingest", name, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "evil\\x1b]0;owned\\x07[bold]x.pdf" in result.output  # visible, markup not applied


def test_an_unreadable_document_is_listed_with_its_reason_and_fails_the_run(
    clean_env: Path, tmp_path: Path
) -> None:
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.7\n not a pdf")
    (tmp_path / "good.pdf").write_bytes(_pdf(2))
    result = CliRunner().invoke(cli, ["ingest", str(tmp_path), "--dry-run", "--json"])
    assert result.exit_code == 1
    quote = json.loads(result.output)["quote"]
    by_name = {Path(d["name"]).name: d for d in quote["documents"]}
    assert by_name["bad.pdf"]["error"] and by_name["good.pdf"]["pages"] == 2
    assert quote["failed"] == 1


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch, clean_env: Path) -> Iterator[Any]:
    import boto3
    from moto import mock_aws

    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        client = boto3.client("s3", region_name=REGION)
        client.create_bucket(Bucket="docs")
        yield client


def test_quote_lists_a_prefix_and_quotes_each_object(s3: Any) -> None:
    s3.put_object(Bucket="docs", Key="incoming/a.pdf", Body=_pdf(11))
    s3.put_object(Bucket="docs", Key="incoming/deep/b.md", Body=b"# B\n\n" + b"text " * 400)
    s3.put_object(Bucket="docs", Key="incoming/folder/", Body=b"")
    s3.put_object(Bucket="docs", Key="other/c.pdf", Body=_pdf(4))  # outside the prefix
    result = CliRunner().invoke(cli, ["quote", "s3://docs/incoming/", "--json"])
    assert result.exit_code == 0, result.output
    quote = json.loads(result.output)["quote"]
    rows = {d["name"]: d for d in quote["documents"]}
    assert set(rows) == {"s3://docs/incoming/a.pdf", "s3://docs/incoming/deep/b.md"}
    assert (
        rows["s3://docs/incoming/a.pdf"]["pages"],
        rows["s3://docs/incoming/a.pdf"]["batches"],
    ) == (11, 3)
    assert rows["s3://docs/incoming/deep/b.md"]["batches"] == 0
    assert quote["models"] == {
        "backend": "bedrock",
        "conversion": GEMMA,
        "planning": None,
        "embedding": "amazon.titan-embed-text-v2:0",
    }
    assert rows["s3://docs/incoming/deep/b.md"]["embedding"]["input_tokens"] == -(-2005 // 4)


def test_quote_does_not_download_an_object_over_the_cap(s3: Any) -> None:
    s3.put_object(Bucket="docs", Key="in/big.pdf", Body=_pdf(3))
    size = s3.head_object(Bucket="docs", Key="in/big.pdf")["ContentLength"]
    result = CliRunner().invoke(
        cli, ["quote", "s3://docs/in", "--max-object-bytes", str(size - 1), "--json"]
    )
    assert result.exit_code == 1
    [row] = json.loads(result.output)["quote"]["documents"]
    assert "download cap" in row["error"] and row["pages"] == 0


def test_quote_names_a_missing_bucket(s3: Any) -> None:
    result = CliRunner().invoke(cli, ["quote", "s3://no-such-bucket/x"])
    assert result.exit_code == 1
    assert "cannot read the prefix" in result.output and "NoSuchBucket" in result.output


def test_quote_refuses_what_is_not_an_s3_url(clean_env: Path) -> None:
    result = CliRunner().invoke(cli, ["quote", "/tmp/docs"])
    assert result.exit_code == 2 and "s3://bucket" in result.output
