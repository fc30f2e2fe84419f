"""The CLI against a real HTTP model server (OpenAI-compatible, on 127.0.0.1), as a user running
Gemma 3 on Ollama or vLLM would: vision conversion, LLM planning, the ledger, `drac cost`, and
the plan cache on re-plans."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from drac.cli import _register_commands, cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "documents"
_register_commands()
LOOP = "LOOP:"
"""A scripted page answer starting with this loops: nothing after it is written."""


class ModelServer(ThreadingHTTPServer):
    """Answers chat completions: page Markdown for image requests, ID plans for text ones."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.unavailable = 0  # answer this many requests with 503 first
        self.refused = 0
        self.cut_vision = False  # stop page answers mid-way, at the "token cap"
        self.plan_answers: list[str] = []  # answer the next planning requests with these
        self.page_answer: dict[int, str] = {}  # write this for a page instead of its Markdown
        self.echo_prompt = False  # answer page images with the system prompt (text-only model)
        # per model name, the page answers of that model (over `page_answer`); an answer
        # starting with LOOP is written, then nothing more: the loop ran to the token cap
        self.model_answers: dict[str, dict[int, str]] = {}

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if _kind(r) == kind]


def _kind(request: dict[str, Any]) -> str:
    parts = request["messages"][-1]["content"]
    has_image = isinstance(parts, list) and any(p.get("type") == "image_url" for p in parts)
    return "vision" if has_image else "planning"


def _text(request: dict[str, Any]) -> str:
    parts = request["messages"][-1]["content"]
    if isinstance(parts, str):
        return parts
    return "\n".join(p["text"] for p in parts if p.get("type") == "text")


def page_markdown(page: int) -> str:
    """What the fake vision model writes for one page."""
    return (
        f"<!-- Page {page} -->\n\n## Section {page}\n\n"
        f"Page {page} explains warranty claims in detail, step {page}.\n\n"
        f"- Keep the receipt of page {page}\n- Call support for page {page}"
    )


class _Handler(BaseHTTPRequestHandler):
    server: ModelServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            refuse = self.server.unavailable > 0
            if refuse:
                self.server.unavailable -= 1
                self.server.refused += 1
            else:
                self.server.requests.append(body)
        if refuse:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        prompt = _text(body)
        finish = "stop"
        if _kind(body) == "vision":
            pages = [int(n) for n in re.findall(r"<!-- Page (\d+) -->", prompt)]
            scripted = self.server.model_answers.get(body["model"], self.server.page_answer)
            written = [scripted.get(page, page_markdown(page)) for page in pages]
            looping = [i for i, text in enumerate(written) if text.startswith(LOOP)]
            if looping:
                written = [*written[: looping[0]], written[looping[0]].removeprefix(LOOP)]
                finish = "length"
            answer = "\n\n".join(written)
            if self.server.echo_prompt:
                answer = body["messages"][0]["content"]
            if self.server.cut_vision:
                answer, finish = answer[: answer.index("<!-- Page 2 -->") + 40], "length"
        elif self.server.plan_answers:
            answer = self.server.plan_answers.pop(0)
        else:
            asked = "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")
            ids = re.findall(r"^(p[\d.]+) ", asked, flags=re.MULTILINE)  # a repair turn too
            groups = [ids[i : i + 2] for i in range(0, len(ids), 2)]
            answer = json.dumps([[f"{g[0]}-{g[-1]}"] if len(g) > 1 else g for g in groups])
        reply = {
            "choices": [
                {"message": {"role": "assistant", "content": answer}, "finish_reason": finish}
            ],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(answer) // 4},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[ModelServer]:
    model_server = ModelServer()
    thread = threading.Thread(target=model_server.serve_forever, daemon=True)
    thread.start()
    yield model_server
    model_server.shutdown()
    model_server.server_close()


def run(server: ModelServer, *args: str) -> tuple[int, str]:
    env = {
        "DRAC_MODEL": "openai",
        "DRAC_OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
        "DRAC_OPENAI_MODEL": "gemma3:27b",
    }
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_ingest_with_a_model_server_then_cost_and_cached_replans(
    server: ModelServer, tmp_path: Path
) -> None:
    pdf = tmp_path / "warranty_and_service.pdf"
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", pdf)
    ws = str(tmp_path / "ws")

    code, out = run(server, "ingest", str(pdf), "-w", ws, "--strategy", "llm", "--json")
    assert code == 0, out
    vision = server.of_kind("vision")
    assert len(vision) == 1  # three pages, one batch of up to five
    assert vision[0]["model"] == "gemma3:27b"
    assert len(server.of_kind("planning")) == 1  # one section

    code, out = run(server, "export", "-w", ws)
    chunks = [json.loads(line) for line in out.splitlines()]
    markdown = "\n\n".join(page_markdown(page) for page in (1, 2, 3))
    for chunk in chunks:
        body = chunk["text"][len(chunk["breadcrumb"]) :].lstrip("\n")
        assert all(line in markdown for line in body.splitlines())
    # the fake planner grouped content IDs in pairs: p1-p2, p3-p4, p5-p6
    assert [[i for i in c["element_ids"] if i.startswith("p")] for c in chunks] == [
        ["p1", "p2"],
        ["p3", "p4"],
        ["p5", "p6"],
    ]
    assert [c["pages"] for c in chunks] == [[1], [2], [3]]

    code, out = run(server, "cost", "-w", ws, "--json")
    document = json.loads(out)["documents"][0]
    assert document["stages"]["conversion"]["calls"] == 1
    assert document["stages"]["conversion"]["input_tokens"] > 0
    assert document["stages"]["planning"]["calls"] == 1
    assert document["stages"]["planning"]["output_tokens"] > 0

    # an unchanged strategy re-plans from the cache: a new version, no model call
    code, out = run(server, "replan", "-w", ws, "--strategy", "llm")
    assert code == 0, out
    assert len(server.of_kind("planning")) == 1
    assert len(server.of_kind("vision")) == 1  # never converted again
    # another target size is another plan: one more planner call
    code, out = run(server, "replan", "-w", ws, "--strategy", "llm", "--target-chars", "600")
    assert code == 0, out
    assert len(server.of_kind("planning")) == 2
    code, out = run(server, "show", "warranty_and_service.pdf", "-w", ws, "--json")
    assert [v["version"] for v in json.loads(out)["versions"]] == [1, 2, 3]


def test_a_busy_model_server_is_retried(server: ModelServer, tmp_path: Path) -> None:
    pdf = tmp_path / "warranty_and_service.pdf"
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", pdf)
    server.unavailable = 1  # a model still loading answers 503 once

    code, out = run(server, "ingest", str(pdf), "-w", str(tmp_path / "ws"), "--json")
    assert code == 0, out
    assert server.refused == 1
    assert len(server.of_kind("vision")) == 1  # the retried call was answered
    code, out = run(
        server, "show", "warranty_and_service.pdf", "-w", str(tmp_path / "ws"), "--markdown"
    )
    assert "conversion failed" not in out and "Page 1 explains warranty claims" in out


def test_a_conversion_cut_off_at_the_token_cap_is_partial_not_indexed(
    server: ModelServer, tmp_path: Path
) -> None:
    pdf = tmp_path / "warranty_and_service.pdf"
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", pdf)
    server.cut_vision = True
    ws = str(tmp_path / "ws")

    code, out = run(server, "ingest", str(pdf), "-w", ws, "--json")
    assert code == 0, out
    code, out = run(server, "status", "-w", ws, "--json")
    [document] = json.loads(out)
    assert document["status"] == "PARTIAL", out
    code, out = run(server, "show", "warranty_and_service.pdf", "-w", ws, "--markdown")
    assert "Page 1 explains warranty claims" in out  # the page finished before the cut stays
    assert "<!-- Page 2: conversion failed: answer cut off at the token cap" in out
    assert "<!-- Page 3: conversion failed: answer cut off at the token cap" in out
    assert "Section 2" not in out  # the half-written page is not indexed as complete


def test_a_server_gone_stops_the_replan_with_one_line(server: ModelServer, tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    for name in ("one.md", "two.md"):
        (tmp_path / name).write_text(f"# {name}\n\nFirst part.\n\nSecond part.\n")
        code, out = run(server, "ingest", str(tmp_path / name), "-w", ws, "--strategy", "llm")
        assert code == 0, out
    port = server.server_address[1]
    server.shutdown()
    server.server_close()  # nothing listens on the port any more

    started = time.monotonic()
    result = CliRunner().invoke(
        cli, ["replan", "-w", ws, "--strategy", "llm", "--target-chars", "600"],
        env={"DRAC_MODEL": "openai", "DRAC_OPENAI_MODEL": "gemma3:27b",
             "DRAC_OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"},
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.output
    stopped = [line for line in result.output.splitlines() if "unreachable" in line]
    assert len(stopped) == 1, result.output
    assert stopped[0].startswith("stopped: model server unreachable")
    assert "2 document(s) not re-planned" in stopped[0]
    assert elapsed < 20  # three connection attempts, not six per section
    code, out = run(server, "show", "one.md", "-w", ws, "--json")
    assert [v["version"] for v in json.loads(out)["versions"]] == [1]  # nothing stored
    code, out = run(server, "status", "-w", ws, "--json")
    attempts = [d["last_planning_attempt"] for d in json.loads(out)]
    [stopped_at] = [a for a in attempts if a]  # the document planning stopped in says so
    assert stopped_at["error"].startswith("model server unreachable")


def test_failed_planning_is_visible_and_stores_no_version(
    server: ModelServer, tmp_path: Path
) -> None:
    ws = str(tmp_path / "ws")
    (tmp_path / "guide.md").write_text("# Guide\n\nFirst part.\n\nSecond part.\n")
    code, out = run(server, "ingest", str(tmp_path / "guide.md"), "-w", ws, "--strategy", "llm")
    assert code == 0, out
    assert "planning: 1 section(s): 1 by the model" in out
    code, out = run(server, "status", "-w", ws, "--json")
    planning = json.loads(out)[0]["planning"]
    assert planning["sections"] == planning["by_model"] == 1
    assert planning["repaired"] == planning["fell_back"] == planning["split"] == 0
    assert planning["input_tokens"] > 0 and planning["output_tokens"] > 0

    server.plan_answers = ["- [ ] First part\n- [ ] Second part"] * 2  # an echo, twice
    code, out = run(server, "replan", "-w", ws, "--strategy", "llm", "--target-chars", "600")
    assert code == 1, out
    assert "every one of 1 section(s) fell back to rules" in out
    assert "no new plan version stored" in out
    # the attempt is counted (plain and JSON) and the document keeps its status and plan
    assert "planning: 1 section(s): 0 by the model, 1 fell back to rules" in out
    assert "not re-planned" in out and "FAILED" not in out
    for line in (line for line in out.splitlines() if "fell back" in line):
        assert line.count("unusable") <= 2  # each answer once, not again in the reason
    assert out.count("First part") == 2  # the two answers, each quoted once
    server.plan_answers = ["- [ ] First part\n- [ ] Second part"] * 2
    code, out = run(server, "replan", "-w", ws, "--strategy", "llm", "--target-chars", "650",
                     "--json")  # fmt: skip
    assert code == 1
    report = json.loads(out[out.index("{") :])
    [outcome] = report["outcomes"]
    assert outcome["status"] == "INDEXED" and outcome["kept_version"]
    assert outcome["plan_version"] == 1 and outcome["chunks"] >= 1 and outcome["pages"] == 1
    assert outcome["seconds"] > 0 and outcome["planning"]["fell_back"] == 1
    assert outcome["planning"]["input_tokens"] > 0  # two calls were made and are counted
    assert report["planning"]["fell_back"] == 1 and report["not_replanned"] == 1
    code, out = run(server, "show", "guide.md", "-w", ws, "--json")
    shown = json.loads(out)
    assert [v["version"] for v in shown["versions"]] == [1]
    assert shown["document"]["status"] == "INDEXED"
    attempt = shown["last_planning_attempt"]  # the last re-plan, which stored nothing
    assert attempt["kept_version"] == 1 and attempt["planning"]["fell_back"] == 1
    assert attempt["planning"]["input_tokens"] > 0 and attempt["seconds"] > 0
    assert "every one of 1 section(s) fell back to rules" in attempt["error"]
    code, out = run(server, "status", "-w", ws, "--json")
    assert json.loads(out)[0]["last_planning_attempt"] == attempt
    code, out = run(server, "show", "guide.md", "-w", ws)
    assert "stored nothing (1 section(s): 0 by the model, 1 fell back to rules" in out

    # an answer that fails once and is then repaired is stored, counted and shown
    server.plan_answers = ["Sure, I can group these."]
    code, out = run(server, "replan", "-w", ws, "--strategy", "llm", "--target-chars", "700")
    assert code == 0, out
    assert "planning: 1 section(s): 1 by the model (1 repaired by a second turn)" in out
    code, out = run(server, "status", "-w", ws, "--json")
    assert json.loads(out)[0]["planning"]["repaired"] == 1
    assert json.loads(out)[0]["last_planning_attempt"] is None  # this one stored a version
    code, out = run(server, "show", "guide.md", "-w", ws)
    assert "the model answered: 'Sure, I can group these.'" in out
    repair = server.of_kind("planning")[-1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2]["content"] == "Sure, I can group these."


def _ingest_warranty(server: ModelServer, tmp_path: Path) -> tuple[str, str]:
    """Ingest the example PDF: its status and its Markdown."""
    pdf = tmp_path / "warranty_and_service.pdf"
    shutil.copy(EXAMPLES / "warranty_and_service.pdf", pdf)
    ws = str(tmp_path / "ws")
    run(server, "ingest", str(pdf), "-w", ws)
    _, out = run(server, "status", "-w", ws, "--json")
    [document] = json.loads(out)
    if document["status"] == "FAILED":  # no Markdown stored
        return document["status"], document["error"]
    _, markdown = run(server, "show", "warranty_and_service.pdf", "-w", ws, "--markdown")
    return document["status"], markdown


def test_a_text_only_model_repeating_the_prompt_is_not_indexed(
    server: ModelServer, tmp_path: Path
) -> None:
    server.echo_prompt = True
    status, said = _ingest_warranty(server, tmp_path)
    assert status == "FAILED"  # every page failed: nothing of the document is indexed
    assert "pages 1-3: conversion failed: the answer repeats the conversion prompt" in said
    assert "text-only model" in said


def test_a_page_that_shares_nothing_with_its_text_layer_is_not_indexed(
    server: ModelServer, tmp_path: Path
) -> None:
    server.page_answer = {
        2: "<!-- Page 2 -->\n\n## Bananas\n\nBananas grow in tropical climates; ripe fruit "
        "turns yellow, then brown spots appear while sugars develop inside the peel quickly."
    }
    status, markdown = _ingest_warranty(server, tmp_path)
    assert status == "PARTIAL"
    assert "Bananas" not in markdown
    assert re.search(r"<!-- Page 2: conversion failed: the answer shares \d% of its words "
                     r"with the page's text layer: it is not this page -->", markdown)  # fmt: skip
    assert "Page 1 explains warranty claims" in markdown  # the other pages stay
    assert "Page 3 explains warranty claims" in markdown


def test_ingest_with_no_server_fails_each_document_fast_and_plainly(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket is closed
    names = ["one.md", "two.md"]
    for name in names:
        (tmp_path / name).write_text(f"# {name}\n\nFirst part.\n\nSecond part.\n")
    started = time.monotonic()
    result = CliRunner().invoke(
        cli, ["ingest", *(str(tmp_path / n) for n in names), "-w", str(tmp_path / "ws"),
              "--strategy", "llm"],
        env={"DRAC_MODEL": "openai", "DRAC_OPENAI_MODEL": "gemma3:27b",
             "DRAC_OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"},
    )  # fmt: skip
    assert result.exit_code == 1
    assert time.monotonic() - started < 20  # 3 connection attempts once, then none
    failed = [line for line in result.output.splitlines() if line.startswith("FAILED")]
    assert {Path(line.split(":")[0]).name for line in failed} == set(names)
    assert all(": model server unreachable: " in line for line in failed)
    assert "unexpected error" not in result.output
