"""Planning-token benchmark: the `llm` planner on the corpus Markdown against a scripted model.

Usage:
    python bench/planning_tokens.py [--companies velvera,cloudway] [--preview-chars N] [--write]

The scripted TextModel answers every section prompt with the rules planner's plan for that
section, written the way the planner prompt asks: compact `{"b":[IDs]}`, the IDs where a
chunk starts. Tokens are counted as the paper does, 4 characters per token: input = system +
user prompt, output = the answer. Reported per chunk against the paper's 264,954 input /
11,714 output tokens for 1,748 chunks (151.6 in / 6.7 out per chunk). A second pass re-plans
with the same strategy through a plan cache and must make no model call.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence

from _common import COMPANIES, CORPUS, machine, write_section

from drac.models import Element, Section, SectionPlan, Strategy, TokenUsage
from drac.parsing import parse_markdown
from drac.planning import RulesPlanner, plan_document, section_view
from drac.ports import MemoryLedger, ModelReply, PlanCache, TextModel
from drac.sectioning import make_sections
from drac.strategies import resolve_strategy

PAPER_IN, PAPER_OUT, PAPER_CHUNKS = 264_954, 11_714, 1_748
_LINE_ID = re.compile(r"^(h\d+|p[\d.]+) ", re.MULTILINE)
_CONTENT_LINE = re.compile(r"^(p[\d.]+ [A-Z](?: \S+)? \d+ )(.*)$")


class ScriptedModel(TextModel):
    """Answers a section prompt with the rules planner's plan of that section (compact JSON)."""

    name = "scripted-rules"

    def __init__(self) -> None:
        self.elements: list[Element] = []
        self.sections: list[Section] = []
        self.calls: list[tuple[str, str, str]] = []

    def load(self, elements: Sequence[Element], sections: Sequence[Section]) -> None:
        """Set the document whose sections the next prompts will be about."""
        self.elements, self.sections = list(elements), list(sections)

    def complete(
        self, system: str, prompt: str, max_tokens: int = 2048, **_asked: object
    ) -> ModelReply:
        ids = set(_LINE_ID.findall(prompt))
        section = next(s for s in self.sections if set(s.element_ids) == ids)
        view = section_view(section, self.elements)
        strategy = Strategy(planner="rules")
        groups = RulesPlanner().propose(view, strategy, "").groups
        answer = json.dumps({"b": [g[0] for g in groups[1:]]}, separators=(",", ":"))
        self.calls.append((system, prompt, answer))
        usage = TokenUsage(input_tokens=(len(system) + len(prompt)) // 4,
                           output_tokens=len(answer) // 4)
        return ModelReply(text=answer, model=self.name, usage=usage)


class MemoryCache(PlanCache):
    """An in-memory plan cache."""

    def __init__(self) -> None:
        self.plans: dict[str, SectionPlan] = {}

    def get(self, key: str) -> SectionPlan | None:
        return self.plans.get(key)

    def put(self, key: str, plan: SectionPlan) -> None:
        self.plans[key] = plan


def prompt_parts(calls: Sequence[tuple[str, str, str]]) -> dict[str, int]:
    """Characters of each prompt part over all calls: system, heading context, headings,
    per-element metadata (id, kind, table, size) and previews, plus the answers."""
    parts = dict.fromkeys(("system", "context", "headings", "metadata", "previews",
                           "newlines", "answer"), 0)
    for system, prompt, answer in calls:
        parts["system"] += len(system)
        parts["answer"] += len(answer)
        lines = prompt.split("\n")
        parts["newlines"] += len(lines) - 1
        for line in lines:
            match = _CONTENT_LINE.match(line)
            if line.startswith("In: "):
                parts["context"] += len(line)
            elif match:
                parts["metadata"] += len(match.group(1))
                parts["previews"] += len(match.group(2))
            else:
                parts["headings"] += len(line)
    return parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", default="velvera,cloudway")
    parser.add_argument("--preview-chars", type=int, default=None)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    strategy = resolve_strategy("llm", preview_chars=args.preview_chars)
    paths = [p for c in args.companies.split(",")
             for p in sorted((CORPUS / COMPANIES[c.strip()] / "md").glob("*.md"))]
    model, cache, ledger = ScriptedModel(), MemoryCache(), MemoryLedger()
    usage, chunks, fallbacks, started = TokenUsage(), 0, 0, time.perf_counter()
    docs: list[tuple[str, list[Element], list[Section]]] = []
    for path in paths:
        elements = parse_markdown(path.read_text(encoding="utf-8"))
        sections = make_sections(elements, strategy.section_budget)
        docs.append((path.name, elements, sections))
        model.load(elements, sections)
        plan = plan_document(path.stem, elements, sections, strategy, 1,
                             text_model=model, cache=cache, ledger=ledger)
        usage = usage + plan.usage
        chunks += len(plan.chunk_ids_arrays)
        fallbacks += sum(1 for s in plan.sections if s.issues.fell_back_to_rules)
    first_calls = len(model.calls)
    for _name, elements, sections in docs:  # unchanged re-plan: cache only
        model.load(elements, sections)
        plan_document("x", elements, sections, strategy, 2, text_model=model, cache=cache,
                      ledger=ledger)
    replan_calls = len(model.calls) - first_calls
    elapsed = time.perf_counter() - started

    calls = model.calls[:first_calls]
    parts = prompt_parts(calls)
    in_chars = sum(len(s) + len(p) for s, p, _ in calls)
    out_chars = parts["answer"]
    rows = [
        ("documents", f"{len(paths)}", "236"),
        ("chunks", f"{chunks}", f"{PAPER_CHUNKS:,}"),
        ("planner calls (sections)", f"{first_calls}", "-"),
        ("input tokens (chars/4)", f"{in_chars / 4:,.0f}", f"{PAPER_IN:,}"),
        ("output tokens (chars/4)", f"{out_chars / 4:,.0f}", f"{PAPER_OUT:,}"),
        ("input tokens per chunk", f"{in_chars / 4 / chunks:.1f}",
         f"{PAPER_IN / PAPER_CHUNKS:.1f}"),
        ("output tokens per chunk", f"{out_chars / 4 / chunks:.2f}",
         f"{PAPER_OUT / PAPER_CHUNKS:.2f}"),
        ("fallbacks to rules", f"{fallbacks}", "-"),
        ("model calls on unchanged re-plan", f"{replan_calls}", "-"),
    ]
    lines = ["| measure | drac | paper |", "|---|---:|---:|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    lines += ["", "Input characters by prompt part (share of input):", "",
              "| part | chars | per chunk (tokens) | share |", "|---|---:|---:|---:|"]
    for name in ("system", "context", "headings", "metadata", "previews", "newlines"):
        lines.append(f"| {name} | {parts[name]:,} | {parts[name] / 4 / chunks:.1f} | "
                     f"{parts[name] / in_chars:.0%} |")
    table = "\n".join(lines)
    print(table)
    print(f"(preview_chars={strategy.preview_chars}, {elapsed:.1f} s)", file=sys.stderr)
    if args.write:
        command = "python bench/planning_tokens.py " + " ".join(argv if argv is not None
                                                               else sys.argv[1:])
        write_section("planning-tokens", (
            "## Planning tokens vs the paper (llm planner, scripted model)\n\n"
            f"Command: `{command.strip()}`  \nMachine: {machine()}; {elapsed:.1f} s. "
            f"Strategy `llm`, preview_chars={strategy.preview_chars}, section budget "
            f"{strategy.section_budget}; 4 characters per token.\n\n{table}\n"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
