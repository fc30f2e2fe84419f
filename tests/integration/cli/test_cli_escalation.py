"""Per-page escalation against a scripted OpenAI-compatible vision server on 127.0.0.1 serving
two models: the cheap one invents a number, drops a row and loops on chosen pages, the strong
one is honest. Exactly those pages are converted again by the strong model, the chunks hold
none of the invented content, and an honest cheap model escalates nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pdfs import make_pdf
from price_pages import honest_answer, price_page
from test_cli_with_model_server import LOOP, ModelServer, run, server

__all__ = ["server"]  # the fixture, shared with the model-server tests

CHEAP = "gemma3:27b"  # the model `run` names (DRAC_OPENAI_MODEL)
STRONG = "strong-vl"
NAMED = {CHEAP: f"openai:{CHEAP}", STRONG: f"openai:{STRONG}"}  # as the records name them
PLANS = {
    1: [("Basic", "$1,200.00", "5"), ("Team", "$3,450.50", "25"), ("Enterprise", "$12,000", "250")],
    2: [("Starter", "$90.00", "2"), ("Growth", "$480.00", "12"), ("Scale", "$1,990.00", "60")],
    3: [("Bronze", "$15.75", "1"), ("Silver", "$31.50", "3"), ("Gold", "$77.25", "9")],
    4: [("Nova", "$640.00", "8"), ("Orion", "$1,280.00", "16"), ("Vega", "$2,560.00", "32")],
    5: [("Alder", "$11.00", "4"), ("Birch", "$22.00", "7"), ("Cedar", "$44.00", "13")],
    6: [("Lark", "$305.00", "6"), ("Wren", "$610.00", "14"), ("Swift", "$915.00", "21")],
}
INVENTED = "$1,250.00"


def _page(number: int) -> tuple:
    return price_page(number, PLANS)


def honest(number: int, rows: list[tuple[str, str, str]] | None = None) -> str:
    """What a faithful model writes for page `number` (its own rows unless given)."""
    return honest_answer(number, PLANS[number] if rows is None else rows)


def cheap() -> dict[int, str]:
    """Page 1 invents a price, page 2 drops its last row, page 5 loops; 3, 4, 6 are right."""
    invented = [("Basic", INVENTED, "5"), *PLANS[1][1:]]
    looping = honest(5, PLANS[5][:1]) + "\n" + "- Plan Birch: Price $22.00; Seats 7.\n" * 120
    answers = {number: honest(number) for number in PLANS}
    return {**answers, 1: honest(1, invented), 2: honest(2, PLANS[2][:2]), 5: LOOP + looping}


def _ingest(server: ModelServer, tmp_path: Path, name: str, *extra: str) -> tuple[str, Path]:
    pdf = tmp_path / f"{name}.pdf"
    pdf.write_bytes(make_pdf([_page(number) for number in PLANS]))
    workspace = tmp_path / name
    code, out = run(server, "ingest", str(pdf), "-w", str(workspace), *extra)
    assert code == 0, out
    return pdf.name, workspace


def _asked(server: ModelServer, model: str) -> list[list[int]]:
    """The pages of each vision request to `model`."""
    return [
        [int(n) for n in re.findall(r"<!-- Page (\d+) -->", str(request["messages"][-1]))]
        for request in server.of_kind("vision")
        if request["model"] == model
    ]


def _status(server: ModelServer, workspace: Path) -> dict:
    code, out = run(server, "status", "-w", str(workspace), "--json")
    assert code == 0, out
    (document,) = json.loads(out)
    return document


def test_only_doubtful_pages_are_escalated_and_no_invented_content_is_indexed(
    server: ModelServer, tmp_path: Path
) -> None:
    server.model_answers = {CHEAP: cheap(), STRONG: {n: honest(n) for n in PLANS}}
    name, workspace = _ingest(server, tmp_path, "mixed", "--escalate-to", f"openai:{STRONG}")
    assert _asked(server, STRONG) == [[1, 2, 5]]  # one batch of the doubtful pages
    document = _status(server, workspace)
    assert document["status"] == "INDEXED" and document["conversion_failures"] == 0
    escalated = {page["page"]: page for page in document["escalations"]}
    assert set(escalated) == {1, 2, 5}
    assert [(p["model"], p["flags_after"]) for p in escalated.values()] == [(NAMED[STRONG], 0)] * 3
    assert escalated[1]["reason"].startswith("2 verification flags (1 unsupported, 1 missing")
    assert escalated[2]["flags_before"] == 3 and "3 missing" in escalated[2]["reason"]
    assert escalated[5]["flags_before"] is None and "repetition loop" in escalated[5]["reason"]
    assert document["verification"]["flagged_pages"] == 0  # the kept answers are clean
    assert any(w.startswith("escalation: 3 page(s)") for w in document["warnings"])

    code, out = run(server, "export", "-w", str(workspace))
    text = "\n".join(json.loads(line)["text"] for line in out.splitlines())
    assert INVENTED not in text and "1250" not in text.replace(",", "")
    for plan, price, _seats in [row for rows in PLANS.values() for row in rows]:
        assert f"Plan {plan}: Price {price}" in text  # the dropped and looped rows are back
    assert text.count("Plan Birch") == 1  # the loop's repetitions are nowhere

    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {
                "models": {
                    CHEAP: {"input_per_million": 0.1, "output_per_million": 0.2},
                    STRONG: {"input_per_million": 1.0, "output_per_million": 5.0},
                }
            }
        )
    )
    code, out = run(server, "cost", "-w", str(workspace), "--prices", str(prices), "--json")
    report = json.loads(out)
    (costs,) = report["documents"]
    assert list(costs["models"]) == [CHEAP, STRONG]  # first the cheap model, then the strong
    assert costs["models"][STRONG]["calls"] == 1 and costs["models"][CHEAP]["calls"] == 3
    esc = report["escalation"]
    assert (esc["first_model"], esc["second_model"]) == (CHEAP, STRONG)
    cheap_tokens = costs["models"][CHEAP]
    every_page_strong = (cheap_tokens["input_tokens"] + 5 * cheap_tokens["output_tokens"]) / 1e6
    assert abs(esc["all_with_second"] - every_page_strong) < 1e-12
    assert esc["first_only"] < esc["with_escalation"] < esc["all_with_second"]
    code, out = run(server, "cost", "-w", str(workspace), "--prices", str(prices))
    assert f"Escalation to {STRONG}" in out

    code, out = run(server, "show", name, "-w", str(workspace), "--json")
    stored = json.loads(out)["verification"]["escalations"]
    assert [page["page"] for page in stored] == [1, 2, 5]
    code, out = run(server, "show", name, "-w", str(workspace))
    assert f"page 2 escalated to {NAMED[STRONG]}" in out
    code, out = run(server, "status", "-w", str(workspace))
    assert code == 0 and "escalated" in out and "1,2,5" in out


def test_an_honest_cheap_model_escalates_nothing(server: ModelServer, tmp_path: Path) -> None:
    server.model_answers = {CHEAP: {n: honest(n) for n in PLANS}, STRONG: {}}
    _, workspace = _ingest(server, tmp_path, "honest", "--escalate-to", f"openai:{STRONG}")
    assert _asked(server, STRONG) == []
    document = _status(server, workspace)
    assert document["escalations"] == [] and document["status"] == "INDEXED"


def test_a_worse_second_answer_is_not_kept_and_a_still_flagged_page_is_held_back(
    server: ModelServer, tmp_path: Path
) -> None:
    strong = {n: honest(n) for n in PLANS}
    strong[2] = honest(2, PLANS[2][:1])  # drops two rows where the cheap model dropped one
    server.model_answers = {CHEAP: cheap(), STRONG: strong}
    _, workspace = _ingest(
        server, tmp_path, "held", "--escalate-to", f"openai:{STRONG}", "--hold-back-flags", "0"
    )
    document = _status(server, workspace)
    escalated = {page["page"]: page for page in document["escalations"]}
    assert escalated[2]["model"] == NAMED[CHEAP] and escalated[2]["flags_after"] == 6
    assert escalated[1]["model"] == escalated[5]["model"] == NAMED[STRONG]
    assert document["status"] == "PARTIAL"  # the strategy's rule: page 2 is held back
    assert document["verification"]["held_back"] == 1
    code, out = run(server, "export", "-w", str(workspace))
    text = "\n".join(json.loads(line)["text"] for line in out.splitlines())
    assert code == 0 and "Plan Starter" not in text and "Plan Basic: Price $1,200.00" in text


def test_escalation_from_the_settings_with_a_threshold(
    server: ModelServer, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("DRAC_ESCALATE_TO", f"openai:{STRONG}")
    monkeypatch.setenv("DRAC_ESCALATE_FLAGS", "2")  # page 1 (2 flags) is let through
    server.model_answers = {CHEAP: cheap(), STRONG: {n: honest(n) for n in PLANS}}
    _ingest(server, tmp_path, "settings")
    assert _asked(server, STRONG) == [[2, 5]]


def test_dry_run_quotes_the_plain_and_the_escalated_worst_case(
    server: ModelServer, tmp_path: Path
) -> None:
    pdf = tmp_path / "plans.pdf"
    pdf.write_bytes(make_pdf([_page(number) for number in PLANS]))
    second = "google.gemma-3-12b-it"  # priced in the default table: $0.09 / $0.29
    code, out = run(
        server, "ingest", str(pdf), "--dry-run", "--model", "bedrock", "--json",
        "--escalate-to", f"bedrock:{second}",
    )  # fmt: skip
    assert code == 0, out
    answer = json.loads(out)
    quote, escalation = answer["quote"], answer["escalation"]
    conversion = quote["conversion"]
    again = (conversion["input_tokens"] * 0.09 + conversion["output_tokens"] * 0.29) / 1e6
    assert again > 0 and escalation["plain"] == quote["dollars"]
    assert abs(escalation["escalated_worst_case"] - (quote["dollars"] + again)) < 1e-12
    expected = quote["dollars"] - conversion["dollars"] + again
    assert abs(escalation["all_with_second"] - expected) < 1e-12
    assert server.requests == []  # a quote calls no model
    code, out = run(
        server, "ingest", str(pdf), "--dry-run", "--model", "bedrock",
        "--escalate-to", f"bedrock:{second}",
    )  # fmt: skip
    assert code == 0 and "worst case (every page converted again)" in out


def test_eval_conversion_scores_each_model_against_the_source(
    server: ModelServer, tmp_path: Path
) -> None:
    table = "| Plan | Price | Seats |\n|---|---|---|\n" + "\n".join(
        f"| {plan} | {price} | {seats} |" for plan, price, seats in PLANS[1]
    )
    source = (
        "## Price plans of region 1\n\nPrices are yearly and include support by Acme "
        f"Services.\n\n{table}\n"
    )
    folder = tmp_path / "corpus" / "plans"
    folder.mkdir(parents=True)
    (folder / "source.md").write_text(source, encoding="utf-8")
    (folder / "plans.pdf").write_bytes(make_pdf([_page(1)]))
    server.model_answers = {
        CHEAP: {1: "<!-- Page 1 -->\n\n" + source.split("| Plan")[0]},  # the table dropped
        STRONG: {1: "<!-- Page 1 -->\n\n" + source},
    }
    code, out = run(
        server, "eval-conversion", str(tmp_path / "corpus"), "--json",
        "--model", "openai", "--model", f"openai:{STRONG}",
    )  # fmt: skip
    assert code == 0, out
    records = {r["model"]: r for r in map(json.loads, out.splitlines())}
    cheap, strong = records[NAMED[CHEAP]], records[NAMED[STRONG]]
    assert strong["word_recall"] == 1.0 and strong["table_fidelity"] == 1.0
    assert cheap["word_recall"] < 0.6 and cheap["table_fidelity"] == 0.0
    assert strong["heading_recall"] == cheap["heading_recall"] == 1.0
    code, out = run(
        server, "eval-conversion", str(tmp_path / "corpus"), "--model", f"openai:{STRONG}"
    )
    assert code == 0 and f"{NAMED[STRONG]}: 1 renditions of 1 documents" in out


def test_escalation_needs_a_vision_model_and_a_backend_model_pair(
    server: ModelServer, tmp_path: Path
) -> None:
    pdf = tmp_path / "plans.pdf"
    pdf.write_bytes(make_pdf([_page(1)]))
    code, out = run(server, "ingest", str(pdf), "--model", "offline", "--escalate-to", "openai:x")
    assert code == 2 and "--escalate-to converts again" in out
    code, out = run(server, "ingest", str(pdf), "--escalate-to", "ollama")
    assert code == 2 and "expected BACKEND:MODEL" in out
    assert server.requests == []
