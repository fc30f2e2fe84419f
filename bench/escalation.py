"""Per-page escalation: a cheap vision model first, only the doubtful pages to a strong one.

Usage:
    python bench/escalation.py [FOLDER] [--limit N] [--write]                       # scripted
    python bench/escalation.py FOLDER --first bedrock:google.gemma-3-27b-it \\
        --second bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0 [--prices FILE]

Every PDF of FOLDER (default: the corpus) is converted with `drac`'s own converter by the
first model alone, by the second model alone, and by the first model with escalation to the
second at each of `--thresholds` (default: the setting's default, 2 and 5). The table reports
pages escalated, the verification flags (unsupported + missing + suspect rows, against each
page's text layer) and pages still flagged, tokens and dollars of each way.

Without --first/--second, both models are scripted on a local OpenAI-compatible server
(127.0.0.1, started here): each page's honest answer is the offline converter's Markdown of
the page (a faithful transcription of its text layer); counting the corpus' pages in order,
the cheap model changes a number on every sixth page, drops the last line holding a number on
every eighth and loops on every thirteenth; the strong model is honest. Prices: the cheap
model at Gemma 3 27B's $0.12/$0.19, the strong one at Claude Haiku 4.5's $1/$5 per million
tokens (override with --prices).
--write puts the scripted table into docs/benchmarks.md (section "escalation").
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _common import CORPUS, machine, write_section

from drac.api.models_setup import named_vision_model
from drac.costs.models import conversion_by_model
from drac.costs.prices import PriceTable, load_prices
from drac.documents.convert import convert_to_markdown
from drac.documents.options import ESCALATE_FLAGS, ConversionOptions
from drac.documents.vision.check import page_texts
from drac.documents.vision.escalate import Escalation
from drac.ports import MemoryLedger, VisionModel

CHEAP, STRONG = "cheap-vl", "strong-vl"
SCRIPTED_PRICES = {
    "models": {
        CHEAP: {"input_per_million": 0.12, "output_per_million": 0.19},
        STRONG: {"input_per_million": 1.0, "output_per_million": 5.0},
    }
}
_NUMBER = re.compile(r"(?<![\d.,])\d{2,}(?![\d.,])")


def _damaged(counted: int, markdown: str) -> str:
    """The cheap model's answer for the corpus' `counted`-th page: a number changed, a line
    dropped, or a loop."""
    head, _, body = markdown.partition("-->")
    head += "-->"
    if counted % 13 == 0:
        return head + body + "\n" + "| - | - | - |\n" * 80
    if counted % 6 == 1 and (found := _NUMBER.search(body)):
        return head + body[: found.end()] + "7" + body[found.end() :]
    lines = body.split("\n")
    holding = [i for i, line in enumerate(lines) if _NUMBER.search(line)]
    if counted % 8 == 2 and holding:
        return head + "\n".join(lines[: holding[-1]] + lines[holding[-1] + 1 :])
    return markdown


class _Scripted(ThreadingHTTPServer):
    """Two scripted vision models: the pages of the document being converted, as its offline
    Markdown (the strong model) or damaged (the cheap one)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.pages: dict[int, str] = {}
        self.before = 0  # pages of the corpus before this document


class _Handler(BaseHTTPRequestHandler):
    server: _Scripted

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        parts = body["messages"][-1]["content"]
        prompt = "\n".join(p.get("text", "") for p in parts if isinstance(p, dict))
        numbers = [int(n) for n in re.findall(r"<!-- Page (\d+) -->", prompt)]
        written, finish = [], "stop"
        for number in numbers:
            page = f"<!-- Page {number} -->\n\n{self.server.pages.get(number, '')}"
            cheap = body["model"] == CHEAP
            answer = _damaged(self.server.before + number, page) if cheap else page
            written.append(answer)
            if answer.endswith("| - | - | - |\n"):
                finish = "length"  # the loop ran to the token cap
                break
        text = "\n\n".join(written)
        reply = {
            "choices": [
                {"message": {"role": "assistant", "content": text}, "finish_reason": finish}
            ],
            "usage": {"prompt_tokens": 1140 * len(numbers), "completion_tokens": len(text) // 4},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def _convert(
    data: bytes, name: str, first: VisionModel, escalation: Escalation | None
) -> tuple[Any, MemoryLedger]:
    ledger = MemoryLedger()
    result = convert_to_markdown(
        data, name, options=ConversionOptions(), vision=first, ledger=ledger,
        document_id=name, escalation=escalation,
    )  # fmt: skip
    return result, ledger


def main() -> None:
    """Measure and print (and with --write store) escalation against either model alone."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", nargs="?", type=Path, default=CORPUS)
    parser.add_argument("--first", help="BACKEND:MODEL (default: the scripted cheap model)")
    parser.add_argument("--second", help="BACKEND:MODEL (default: the scripted strong model)")
    parser.add_argument(
        "--thresholds",
        default=f"{ESCALATE_FLAGS},2,5",
        help="escalate pages with more flags than each of these (comma-separated)",
    )
    parser.add_argument("--prices", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=0, help="at most this many PDFs")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    scripted = not (args.first and args.second)
    thresholds = [int(n) for n in args.thresholds.split(",") if n.strip()]
    server = None
    if scripted:
        import os

        server = _Scripted()
        threading.Thread(target=server.serve_forever, daemon=True).start()
        os.environ["DRAC_OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
        prices = PriceTable().merged(SCRIPTED_PRICES)
        first = named_vision_model(f"openai:{CHEAP}")
        second = named_vision_model(f"openai:{STRONG}")
    else:
        prices = load_prices(args.prices)
        first, second = named_vision_model(args.first), named_vision_model(args.second)
    assert first is not None and second is not None, "--first and --second name vision models"
    pdfs = sorted(args.folder.rglob("*.pdf"))[: args.limit or None]
    rows: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    for path in pdfs:
        data = path.read_bytes()
        if server is not None:
            offline = convert_to_markdown(
                data, path.name, options=ConversionOptions(), vision=None,
                ledger=MemoryLedger(), document_id=path.name,
            )  # fmt: skip
            server.before += len(server.pages)
            server.pages = page_texts(offline.markdown)
        ways = {
            "first model alone": (first, None),
            "second model alone": (second, None),
            **{
                f"first, escalated over {n} flags": (first, Escalation(second, n))
                for n in thresholds
            },
        }
        for way, (model, escalation) in ways.items():
            result, ledger = _convert(data, path.name, model, escalation)
            row = rows.setdefault(way, dict.fromkeys(
                ("pages", "escalated", "kept", "flags", "flagged", "failed", "in", "out", "$"), 0.0
            ))  # fmt: skip
            row["pages"] += result.pages
            row["escalated"] += len(result.escalations)
            row["kept"] += sum(e.model == second.name for e in result.escalations)
            row["flags"] += sum(page.flags for page in result.verification)
            row["flagged"] += sum(1 for page in result.verification if page.flags)
            row["failed"] += result.markdown.count("conversion failed")
            for cost in conversion_by_model(ledger.entries, prices).values():
                row["in"] += cost.input_tokens
                row["out"] += cost.output_tokens
                row["$"] += cost.dollars
    seconds = time.perf_counter() - started
    table = (
        "| conversion | pages | escalated (second kept) | flags | pages flagged | pages failed "
        "| tokens in / out | dollars |\n|---|---|---|---|---|---|---|---|\n"
    )
    for way, row in rows.items():
        table += (
            f"| {way} | {row['pages']:.0f} | {row['escalated']:.0f} ({row['kept']:.0f}) | "
            f"{row['flags']:.0f} | {row['flagged']:.0f} | {row['failed']:.0f} | "
            f"{row['in']:,.0f} / {row['out']:,.0f} | ${row['$']:.4f} |\n"
        )
    print(table)
    print(f"{len(pdfs)} PDFs, {seconds:.1f} s; first {first.name}, second {second.name}")
    if args.write and scripted:
        body = (
            "## Escalation: a cheap model first, doubtful pages to a strong one (scripted)\n\n"
            "`DRAC_SHARED=/work/shared .venv/bin/python bench/escalation.py"
            + (f" --limit {args.limit}" if args.limit else "")
            + " --write`. Two scripted vision models on a local OpenAI-compatible server: each "
            "page's honest answer is the offline converter's Markdown of the page; the cheap "
            "model (the corpus' pages counted in order) changes a number on every sixth page, "
            "drops the last line holding a number on every eighth and loops on every "
            "thirteenth, the strong one is honest. Prices per "
            "million tokens: cheap $0.12/$0.19 (Gemma 3 27B), strong $1/$5 (Claude Haiku 4.5); "
            "input 1,140 tokens a page image, output 4 characters a token. A page is escalated "
            "with more flags than the threshold, or when it failed. Flags are counted on the "
            "kept answers (a failed page is not judged: see pages failed); the honest model's "
            "own flags are the verifier's false flags (see Conversion verification). The "
            f"default threshold, {ESCALATE_FLAGS}, is the one that lets no damaged page "
            "through here.\n\n"
            f"{table}\n{len(pdfs)} corpus PDFs, {seconds:.0f} s on {machine()}.\n"
        )
        write_section("escalation", body)
    if server is not None:
        server.shutdown()


if __name__ == "__main__":
    main()
