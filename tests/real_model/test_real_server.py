"""drac against a real model server: llama.cpp's own server with Gemma 3 270M, a base model
without vision. These tests check the plumbing and every failure path, never quality: each
answer parses or is counted as failed, chunks are verbatim and complete, failures are seen.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from real_server import RunningServer, start_server
from shared_paths import CLOUDWAY, require

from drac.cli import cli
from drac.clients.http_json import Backoff
from drac.clients.openai_compat import NO_IMAGES, OpenAICompatTextModel, OpenAICompatVisionModel
from drac.errors import ModelCallError
from drac.models import Strategy
from drac.parsing import parse_markdown
from drac.planning import plan_document
from drac.planning.errors import ModelServerUnreachable
from drac.planning.plan_format import plan_grammar, plan_schema, read_plan
from drac.ports import MemoryLedger, ModelReply
from drac.sectioning import make_sections

pytestmark = pytest.mark.real_model

MODEL = "gemma3-270m"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "documents"
DOCUMENTS = ("Trainee Pilot Programme.md", "Co-brand Credit Cards.md")


def _text_model(server: RunningServer, structured: str = "auto") -> OpenAICompatTextModel:
    return OpenAICompatTextModel(
        MODEL,
        base_url=server.base_url,
        structured=structured,  # type: ignore[arg-type]
        temperature=0.1,
        timeout_s=300,
        backoff=Backoff(attempts=3, base_s=0.2, max_s=1),
    )


def _run(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_a_replan_of_corpus_documents_through_the_server(
    model_server: RunningServer, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCUMENTS:
        shutil.copy(require(CLOUDWAY / "md" / name), folder / name)
    ws = str(tmp_path / "ws")
    env = {
        "DRAC_BACKEND": "openai",
        "DRAC_OPENAI_BASE_URL": model_server.base_url,
        "DRAC_OPENAI_MODEL": MODEL,
        "DRAC_MODEL_TIMEOUT_S": "300",
    }
    code, out = _run(env, "ingest", str(folder), "-w", ws, "--model", "offline", "--no-embed")
    assert code == 0, out
    code, out = _run(env, "replan", "-w", ws, "--model", "openai", "--planner", "llm",
                     "--no-embed", "--json")  # fmt: skip
    report = _json(out)
    outcomes = report["outcomes"]
    assert len(outcomes) == len(DOCUMENTS)
    for outcome in outcomes:
        counts = outcome["planning"]
        assert counts is not None, outcome  # the attempt is reported, whatever its end
        # every section is accounted for: planned by the model (first answer or repair
        # turn) or fell back, never silently lost
        assert counts["by_model"] + counts["fell_back"] == counts["sections"] >= 1
        assert outcome["seconds"] > 0
    # the plan format admits only complete plans: the model plans every section here
    assert all(o["planning"]["by_model"] == o["planning"]["sections"] for o in outcomes), out
    assert code == 0
    _assert_chunks_verbatim_and_complete(Path(ws))


def _assert_chunks_verbatim_and_complete(ws: Path) -> None:
    """Every content element of each document is in exactly one chunk of its active plan,
    and a chunk's text holds each of its elements' text verbatim."""
    from drac.cli.options import open_workspace

    workspace = open_workspace(ws)
    try:
        for record in workspace.documents():
            elements = {e.id: e for e in workspace.get_elements(record.document_id)}
            chunks = workspace.active_chunks(record.document_id)
            assert chunks, record.source
            seen = [i for chunk in chunks for i in chunk.element_ids if not elements[i].is_heading]
            content = [i for i, e in elements.items() if not e.is_heading]
            assert sorted(seen) == sorted(content) and len(seen) == len(set(seen))
            for chunk in chunks:
                for element_id in chunk.element_ids:
                    if not elements[element_id].is_heading:  # headings: the breadcrumb
                        assert elements[element_id].text.strip() in chunk.text
    finally:
        workspace.close()


def test_the_structured_output_request_is_accepted(model_server: RunningServer) -> None:
    elements = parse_markdown(require(CLOUDWAY / "md" / DOCUMENTS[0]).read_text())
    ids = [e.id for e in elements if not e.is_heading][:6]
    prompt = "\n".join(f"{i} P 200 {e.text[:60]}" for i, e in zip(ids, elements, strict=False))
    for mode in ("auto", "json_schema"):
        model = _text_model(model_server, mode)
        reply = model.complete(
            'Reply JSON only: {"b":[IDs]}, the IDs where a new chunk starts.',
            prompt,
            max_tokens=64,
            schema=plan_schema(ids),
            grammar=plan_grammar(ids),
        )
        # the server took the form asked for (no step-down) and the answer is a plan
        assert model.structured == ("grammar" if mode == "auto" else "json_schema")
        groups, flat = read_plan(reply.text, ids)
        assert [i for group in groups for i in group] == ids and not flat
        assert reply.usage.output_tokens > 0


class _StopsAfterFirstCall:
    """A text model that stops the server once it has answered the first call."""

    def __init__(self, model: OpenAICompatTextModel, server: RunningServer) -> None:
        self.model, self.server = model, server
        self.name = model.name
        self.structured_output = model.structured_output
        self.max_answer_tokens = model.max_answer_tokens
        self.calls = 0

    def complete(self, *args: object, **kwargs: object) -> ModelReply:
        self.calls += 1
        reply = self.model.complete(*args, **kwargs)  # type: ignore[arg-type]
        self.server.stop()
        return reply


def test_a_server_stopped_mid_run_stops_planning_with_the_reason(tmp_path: Path) -> None:
    server = start_server(tmp_path)
    try:
        elements = parse_markdown(require(CLOUDWAY / "md" / DOCUMENTS[1]).read_text())
        strategy = Strategy(planner="llm", section_budget=5)
        sections = make_sections(elements, strategy.section_budget)
        assert len(sections) >= 2
        model = _StopsAfterFirstCall(_text_model(server), server)
        ledger = MemoryLedger()
        with pytest.raises(ModelServerUnreachable, match="unreachable"):
            plan_document("d1", elements, sections, strategy, 1,
                          text_model=model, ledger=ledger)  # type: ignore[arg-type]  # fmt: skip
        assert model.calls == 2  # the first section, then the call that found it gone
        outcomes = [entry.outcome for entry in ledger.entries]
        assert outcomes[0] in ("ok", "repaired", "unparseable", "cut off")
        assert outcomes[-1].startswith("error: model server unreachable")
    finally:
        server.stop()


def test_a_text_only_server_given_page_images_fails_at_once_naming_the_cause(
    model_server: RunningServer,
) -> None:
    sleeps: list[float] = []
    model = OpenAICompatVisionModel(
        MODEL, base_url=model_server.base_url, backoff=Backoff(attempts=6), sleep=sleeps.append
    )
    with pytest.raises(ModelCallError) as caught:
        model.convert("Convert the page to Markdown.", "Page 1", [_png()])
    assert str(caught.value).startswith(NO_IMAGES)
    assert caught.value.retry is None and sleeps == []  # permanent: not retried


def test_a_pdf_given_to_a_text_only_server_fails_with_one_line_naming_the_cause(
    model_server: RunningServer, tmp_path: Path
) -> None:
    pdf = tmp_path / "warranty.pdf"
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", pdf)
    env = {"DRAC_OPENAI_BASE_URL": model_server.base_url, "DRAC_OPENAI_MODEL": MODEL}
    code, out = _run(env, "ingest", str(pdf), "-w", str(tmp_path / "ws"), "--model", "openai",
                     "--no-embed", "--json")  # fmt: skip
    assert code == 1
    [outcome] = _json(out)["outcomes"]
    assert outcome["status"] == "FAILED" and outcome["chunks"] == 0  # no page text indexed
    assert outcome["error"].count(NO_IMAGES) == 1, outcome["error"]


def _json(out: str) -> dict:
    """The JSON report in a command's output (after any progress lines)."""
    return json.loads(out[out.index("{") if out.startswith("{") else out.index("\n{") + 1 :])


def _png() -> bytes:
    """A small real PNG page image."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), "white").save(buffer, format="PNG")
    return buffer.getvalue()
