import json

import pytest
from click.testing import CliRunner

from drac.cli import _register_commands, cli
from drac.local.workspace import Workspace
from drac.models import LedgerEntry

_register_commands()

DOC = """# Premiums

## Payment terms

For a Policy Term of 16 years, the Premium Payment Term is 8 years and the Income Period is
25 years.

For a Policy Term of 20 years, the Premium Payment Term is 10 years.

## Baggage

Each passenger may check in two bags of 23 kilograms on long-haul flights.
"""
QUERIES = (
    "Enterprise Name,Query Type,Query,Supporting Facts\n"
    'Acme,Temporal,What is the payment term for a 16 year policy?,"[{""filename"": '
    '""policy.md"", ""text"": ""For a Policy Term of 16 years, the Premium Payment Term is 8 '
    'years""}]"\n'
    'Acme,Boolean,Can I check two bags?,"[{""filename"": ""policy.md"", ""text"": ""Each '
    'passenger may check in two bags of 23 kilograms""}]"\n'
    'Other,Boolean,Is it elsewhere?,"[{""filename"": ""missing.md"", ""text"": ""nowhere""}]"\n'
)


@pytest.fixture()
def workspace(tmp_path):
    source = tmp_path / "docs" / "md"
    source.mkdir(parents=True)
    (source / "policy.md").write_text(DOC, encoding="utf-8")
    ws = tmp_path / "ws"
    result = CliRunner().invoke(cli, ["ingest", str(source), "--workspace", str(ws)])
    assert result.exit_code == 0, result.output
    (tmp_path / "queries.csv").write_text(QUERIES, encoding="utf-8")
    return tmp_path


def test_eval_side_by_side_with_fixed_baseline_and_compare(workspace):
    other = workspace / "other.jsonl"
    other.write_text(json.dumps({"source": "policy.pdf", "text": DOC}) + "\n", encoding="utf-8")
    args = ["eval", str(workspace / "queries.csv"), "--workspace", str(workspace / "ws"),
            "--baseline", "fixed", "--compare", str(other), "--embedder", "none"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "2 of 3 queries used" in result.output
    assert "BM25 only" in result.output
    assert "0 document(s) from the PDF text layer, 1 from converted Markdown" in result.output
    for name in ("drac", "fixed 1000/200", "other", "R@6", "NDCG@6"):
        assert name in result.output

    result = CliRunner().invoke(cli, [*args, "--json"])
    report = json.loads(result.output)
    assert report["queries_used"] == 2
    assert [r["chunk_set"] for r in report["results"]] == ["drac", "fixed 1000/200", "other"]
    whole = report["results"][2]["overall"]
    assert whole["R@6"] == 1.0 and whole["MRR"] == 1.0 and whole["P@3"] == pytest.approx(1 / 3)


def test_eval_errors_are_clear(tmp_path):
    (tmp_path / "q.csv").write_text(QUERIES, encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "q.csv"), "--workspace",
                                      str(tmp_path / "none"), "--embedder", "none"])
    assert result.exit_code != 0
    assert "nothing to evaluate" in result.output
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "q.csv"), "--workspace",
                                      str(tmp_path / "none"), "--embedder", "word2vec"])
    assert result.exit_code != 0


def test_cost_of_an_offline_workspace_says_no_model_was_called(workspace):
    text = CliRunner().invoke(cli, ["cost", "--workspace", str(workspace / "ws")]).output
    assert "No model calls are recorded" in text


def test_cost_reports_stages_agentic_equivalent_and_projection(workspace):
    ws_path = workspace / "ws"
    ws = Workspace(ws_path, create=False)
    try:
        doc = ws.documents()[0].document_id
        ws.record(LedgerEntry(document_id=doc, stage="conversion", model="google.gemma-3-27b-it",
                              input_tokens=10_000, output_tokens=2_000))
        ws.record(LedgerEntry(document_id=doc, stage="planning", model="gpt-4.1",
                              input_tokens=1_000, output_tokens=40))
        chars = len(ws.get_markdown(doc))
    finally:
        ws.close()
    result = CliRunner().invoke(cli, ["cost", "--workspace", str(ws_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    totals = report["totals"]
    assert totals["conversion"]["dollars"] == pytest.approx((10_000 * 0.23 + 2_000 * 0.38) / 1e6)
    assert totals["planning"]["dollars"] == pytest.approx((1_000 * 2 + 40 * 8) / 1e6)
    tokens = -(-chars // 4)
    assert report["agentic_total"]["output_tokens"] == tokens
    assert report["agentic_total"]["dollars"] == pytest.approx(tokens * 10 / 1e6)
    text = CliRunner().invoke(cli, ["cost", "--workspace", str(ws_path)]).output
    assert "conversion" in text and "planning" in text
    assert "Per 1,000,000 pages" in text and "agentic" in text
    assert "No model calls are recorded" not in text


class _Recording:
    """A fake embedder (length and letter sums) recording the texts it embeds."""

    name = "recording"
    dimension = 3

    def __init__(self):
        self.texts = []

    def embed(self, texts):
        self.texts.extend(texts)
        return [[float(len(t)), float(sum(map(ord, t)) % 97), 1.0] for t in texts]


def test_eval_reuses_the_workspace_vectors_and_embeds_only_what_is_missing(
    tmp_path, monkeypatch
):
    import drac.cli.embed_step as embed_step
    import drac.embedders.factory as factory

    recording = _Recording()
    monkeypatch.setattr(embed_step, "search_embedder", lambda spec=None: recording)
    monkeypatch.setattr(factory, "embedder_from_spec", lambda spec, env=None: recording)
    source = tmp_path / "docs"
    source.mkdir()
    (source / "policy.md").write_text(DOC, encoding="utf-8")
    ws = tmp_path / "ws"
    assert CliRunner().invoke(cli, ["ingest", str(source), "-w", str(ws)]).exit_code == 0
    ingested = list(recording.texts)  # every drac chunk, embedded at ingest
    (tmp_path / "queries.csv").write_text(QUERIES, encoding="utf-8")
    args = ["eval", str(tmp_path / "queries.csv"), "-w", str(ws), "--baseline", "fixed"]
    recording.texts.clear()
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert ingested and not set(ingested) & set(recording.texts)  # the ingest's are reused
    assert "embed (recording)" in first.output  # the fixed windows and the queries: new
    recording.texts.clear()
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and recording.texts == []  # all cached, by text digest
    assert "embed (" not in again.output
