import json

import pytest

from drac.evaluation.chunksets import (
    agentic_reference_to_chunks,
    chunks_from_jsonl_lines,
    load_chunk_set,
    write_jsonl,
)
from drac.evaluation.queries import document_key, parse_queries

CSV = (
    "Enterprise Name,Query Type,Query,Supporting Facts\n"
    'Acme,Boolean,Is it green?,"[{""filename"": ""Env_Policy.md"", ""text"": ""It is green.""}]"\n'
    'Acme,Temporal,"When, exactly?","[{""filename"": ""a.md"", ""text"": ""In 2026""},\n'
    '{""filename"": ""b.md"", ""text"": ""line one\\nline two""}]"\n'
)


def test_parse_queries_reads_facts_and_multiline_fields():
    queries = parse_queries(CSV)
    assert [q.query_type for q in queries] == ["Boolean", "Temporal"]
    assert queries[1].text == "When, exactly?"
    assert queries[1].facts[1].text == "line one\nline two"
    assert queries[0].document_keys == {"env_policy"}
    assert queries[1].document_keys == {"a", "b"}


def test_parse_queries_rejects_missing_column_and_bad_facts():
    with pytest.raises(ValueError, match="Supporting Facts"):
        parse_queries("Enterprise Name,Query Type,Query\nA,B,C\n")
    with pytest.raises(ValueError, match="row 2"):
        parse_queries("Enterprise Name,Query Type,Query,Supporting Facts\nA,B,C,not json\n")
    with pytest.raises(ValueError, match="row 2"):
        parse_queries("Enterprise Name,Query Type,Query,Supporting Facts\nA,B,C,[]\n")


def test_document_key_ignores_format_and_case():
    assert document_key("Env_Policy.md") == document_key("env_policy.PDF") == "env_policy"
    assert document_key("Careers at CloudWay 24.pdf") == "careers at cloudway 24"


def test_agentic_reference_conversion_round_trip(tmp_path):
    line = json.dumps({"file_name": "x.md", "title": "# X", "chunks": ["one", "two"]})
    objects = list(agentic_reference_to_chunks([line, ""]))
    assert [o["text"] for o in objects] == ["one", "two"]
    assert objects[0]["source"] == "x.md"
    assert set(objects[0]) >= {"document_id", "source", "chunk_id", "plan_version", "text",
                               "breadcrumb", "element_ids", "pages"}
    path = tmp_path / "agentic.jsonl"
    assert write_jsonl(objects, path) == 2
    chunk_set = load_chunk_set(path)
    assert chunk_set.name == "agentic"
    assert [c.text for c in chunk_set.chunks] == ["one", "two"]
    assert chunk_set.documents == {"x"}


def test_jsonl_needs_text_and_source():
    with pytest.raises(ValueError, match="line 2"):
        chunks_from_jsonl_lines(['{"text": "a", "source": "s.md"}', '{"text": "b"}'])


def test_convert_agentic_command(tmp_path, capsys):
    from drac.evaluation.convert_agentic import main

    ref = tmp_path / "agentic-reference-x.jsonl"
    ref.write_text(json.dumps({"file_name": "a.md", "title": "# A", "chunks": ["x", "y"]}) + "\n")
    assert main([str(ref)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["text"] for line in lines] == ["x", "y"]
    with pytest.raises(SystemExit) as no_files:
        main([])
    assert no_files.value.code == 2
    with pytest.raises(SystemExit) as missing:
        main([str(tmp_path / "missing.jsonl")])
    assert missing.value.code == 2
    assert "missing.jsonl" in capsys.readouterr().err
