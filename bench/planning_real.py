"""The LLM planner against a real model server: llama.cpp's own server (the `xllamacpp` wheel)
with Gemma 3 270M, today's break-ID format against the ID-group format it replaced.

Usage:
    python bench/planning_real.py [--docs N] [--threads T] [--write]

Each format plans the same held-out corpus Markdown documents, section by section, through
drac's own planner and client (one repair turn, then rules). Reported per format: the share
of sections planned by the model, how many needed the repair turn, fell back or were split by
the validator; output tokens per final chunk (the server's own count, repair turns included)
and wall seconds per section. The server runs with one compute thread (see README, Models).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _common import CORPUS, REPO, machine, write_section

from drac.clients.http_json import Backoff
from drac.clients.openai_compat import OpenAICompatTextModel
from drac.models import Strategy
from drac.parsing import parse_markdown
from drac.planning import plan_document, planning_counts
from drac.ports import MemoryLedger, ModelReply, TextModel
from drac.sectioning import make_sections

sys.path.insert(0, str(REPO / "tests"))
from real_server import start_server

DOCUMENTS = (
    "Velvera Technologies/md/environmental_policy.md",
    "Velvera Technologies/md/contact_info.md",
    "Velvera Technologies/md/awards_and_recognition.md",
    "CloudWay-24/md/Delayed Baggage.md",
    "CloudWay-24/md/Armed Forces Discount Program.md",
)
MODEL = "gemma3-270m"
FORMATS: dict[str, Any] = {
    "break IDs": "auto",  # finds llama.cpp's server: the grammar
    "break IDs, schema only": "json_schema",  # what other servers are sent
    "ID groups": "json_schema",  # the format drac used before
}
OLD_PROMPT = (
    "Group document elements into retrieval chunks. Lines: ID, kind, size, preview. Reply "
    'JSON only: {{"chunks": [[IDs],...]}} with every p-ID once, in order; write runs as '
    '"pA-pB". A chunk is one topic: 3-8 blocks, about {target} chars, at most {limit}; keep a '
    "table's rows (same t) together; avoid tiny chunks."
)
"""The ID-group format's system prompt (json_schema servers), as drac sent it before."""
_LINE_ID = re.compile(r"^(p[\d.]+) ", re.MULTILINE)


def old_schema(content_ids: Sequence[str]) -> dict[str, Any]:
    """The ID-group format's schema: arrays of the section's IDs or "pA-pB" runs."""
    item = {
        "anyOf": [
            {"type": "string", "enum": list(content_ids)},
            {"type": "string", "pattern": r"^p[0-9]+(\.[0-9]+)?-p[0-9]+(\.[0-9]+)?$"},
        ]
    }
    chunks = {"type": "array", "minItems": 1, "items": {"type": "array", "minItems": 1,
                                                        "items": item}}  # fmt: skip
    return {"type": "object", "properties": {"chunks": chunks}, "required": ["chunks"],
            "additionalProperties": False}  # fmt: skip


class OldFormat(TextModel):
    """Sends what drac sent before: the ID-group prompt and schema, its token cap."""

    def __init__(self, inner: OpenAICompatTextModel, strategy: Strategy) -> None:
        self.inner, self.name = inner, inner.name
        self.structured_output = True
        self.max_answer_tokens = inner.max_answer_tokens
        self.system = OLD_PROMPT.format(target=strategy.target_chars,
                                        limit=strategy.hard_limit_chars)  # fmt: skip

    def complete(self, system: str, prompt: str, max_tokens: int = 2048, *,
                 schema: Mapping[str, Any] | None = None, grammar: str | None = None,
                 earlier: Sequence[tuple[str, str]] = ()) -> ModelReply:  # fmt: skip
        first = earlier[0][0] if earlier else prompt
        ids = _LINE_ID.findall(first)
        cap = max(16, min(1024, 48 + 6 * len(ids)))
        return self.inner.complete(self.system, prompt, cap, schema=old_schema(ids),
                                   earlier=earlier)  # fmt: skip


def run(fmt: str, base_url: str, paths: Sequence[Path]) -> dict[str, float]:
    """Plan the documents in one format; the totals."""
    strategy = Strategy(planner="llm")
    client = OpenAICompatTextModel(
        MODEL,
        base_url=base_url,
        timeout_s=600,
        structured=FORMATS[fmt],
        backoff=Backoff(attempts=2),
    )
    model: TextModel = client if fmt.startswith("break IDs") else OldFormat(client, strategy)
    totals = dict.fromkeys(("sections", "by_model", "repaired", "fell_back", "split",
                            "chunks", "output_tokens", "input_tokens", "seconds"), 0.0)  # fmt: skip
    for path in paths:
        elements = parse_markdown(path.read_text(encoding="utf-8"))
        sections = make_sections(elements, strategy.section_budget)
        ledger = MemoryLedger()
        started = time.perf_counter()
        plan = plan_document("d", elements, sections, strategy, 1, text_model=model,
                             ledger=ledger)  # fmt: skip
        totals["seconds"] += time.perf_counter() - started
        counts = planning_counts(plan)
        totals["sections"] += counts.sections
        totals["by_model"] += counts.by_model
        totals["repaired"] += counts.repaired
        totals["fell_back"] += counts.fell_back
        totals["split"] += sum(1 for s in plan.sections if s.issues.split_chunks)
        totals["chunks"] += sum(len(s.chunks) for s in plan.sections)
        totals["output_tokens"] += sum(e.output_tokens for e in ledger.entries)
        totals["input_tokens"] += sum(e.input_tokens for e in ledger.entries)
        print(f"{fmt}: {path.name}: {counts.describe()}", file=sys.stderr)
    totals["structured"] = client.structured  # type: ignore[assignment]
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=len(DOCUMENTS))
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    paths = [CORPUS / name for name in DOCUMENTS[: args.docs]]
    server = start_server(Path("/tmp"))
    try:
        results = {fmt: run(fmt, server.base_url, paths) for fmt in FORMATS}
    finally:
        server.stop()
    rows = []
    for fmt, t in results.items():
        sections = t["sections"] or 1
        rows.append(
            f"| {fmt} | {t['structured']} | {t['by_model']:.0f}/{t['sections']:.0f} "
            f"({t['by_model'] / sections:.0%}) | {t['repaired']:.0f} | {t['fell_back']:.0f} | "
            f"{t['split']:.0f} | {t['output_tokens'] / max(t['chunks'], 1):.2f} | "
            f"{t['input_tokens'] / max(t['chunks'], 1):.0f} | {t['seconds'] / sections:.1f} |"
        )
    body = "\n".join([
        "## Planning with a real model (llama.cpp's server, Gemma 3 270M)",
        "",
        "Command: `python bench/planning_real.py --write`  ",
        f"Machine: {machine()}; server: xllamacpp (llama.cpp) with Gemma 3 270M Q4_K_M, one "
        f"compute thread, n_ctx 8192, temperature 0.1; {len(paths)} held-out corpus Markdown "
        "documents (`bench/planning_real.py`). Tokens are the server's own counts, repair "
        "turns included; per chunk means per final chunk after validation.",
        "",
        "| format | sent as | sections planned by the model | repaired by a 2nd turn | "
        "fell back to rules | split by the validator | output tokens / chunk | "
        "input tokens / chunk | seconds / section |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ])  # fmt: skip
    print(body)
    print(json.dumps(results, indent=1), file=sys.stderr)
    if args.write:
        write_section("planning-real", body)


if __name__ == "__main__":
    main()
