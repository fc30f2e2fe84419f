"""What a failed planner answer costs: the first call and its repair turn, by section, on the
corpus Markdown (issue 20), against the 1,024-token cap every call had before.

Usage:
    python bench/planning_repair_cost.py [--write]

No model is called: a failed answer is taken at its worst, cut off at its token cap, and tokens
are counted as bench/planning_tokens.py counts them (4 characters a token). A call costs its
input (system + prompt, plus for the repair turn the failed answer shown again and the
complaint) and its output cap. Whether a repair turn then succeeds depends on the model:
measuring that needs a real one (issue 20's llama.cpp server), which the test machines cannot
build in minutes.
"""

from __future__ import annotations

import argparse
import json
import statistics

from _common import CORPUS, machine, write_section

from drac.models import Strategy
from drac.parsing import parse_markdown
from drac.planning import RulesPlanner, compress_ranges, section_prompt, section_view
from drac.planning.llm import REPAIR_ANSWER_CHARS, REPAIR_PROMPT, SYSTEM_PROMPT, answer_token_cap
from drac.sectioning import make_sections

OLD_CAP = 1024  # the answer cap of every planner call before issue 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    strategy = Strategy(planner="llm")
    system = SYSTEM_PROMPT.format(target=strategy.target_chars, limit=strategy.hard_limit_chars)
    caps: list[int] = []
    first: list[float] = []
    repair: list[float] = []
    before: list[float] = []
    ranged = listed = schema_ranged = chunks = 0.0
    headroom: list[float] = []  # cap over the tokens of the longest answer: listed, 1 ID a chunk
    for path in sorted(CORPUS.rglob("*.md")):
        elements = parse_markdown(path.read_text(encoding="utf-8"))
        for section in make_sections(elements, strategy.section_budget):
            view = section_view(section, elements)
            if not view.content:
                continue
            prompt_tokens = (len(system) + len(section_prompt(view, strategy))) / 4
            cap = answer_token_cap([e.id for e in view.content], OLD_CAP)
            complaint = f"it stopped at the token cap ({cap} tokens) before it ended"
            shown = min(cap * 4, REPAIR_ANSWER_CHARS) / 4
            asked = len(REPAIR_PROMPT.format(complaint=complaint, shape="[[IDs],...]")) / 4
            caps.append(cap)
            first.append(prompt_tokens + cap)
            repair.append(prompt_tokens + shown + asked + cap)
            before.append(2 * (prompt_tokens + OLD_CAP))  # the old answer and its retry
            groups = RulesPlanner().propose(view, strategy, "").groups
            order = [element.id for element in view.content]
            runs = [compress_ranges(g, order) for g in groups]
            ranged += len(json.dumps(runs, separators=(",", ":"))) / 4
            schema_ranged += len(json.dumps({"chunks": runs}, separators=(",", ":"))) / 4
            listed += len(json.dumps({"chunks": groups}, separators=(",", ":"))) / 4
            chunks += len(groups)
            worst = len(json.dumps({"chunks": [[i] for i in order]}, separators=(",", ":"))) / 4
            headroom.append(cap / worst)
    failed_now = [a + b for a, b in zip(first, repair, strict=True)]
    rows = [
        ("sections", f"{len(caps)}"),
        ("answer cap, median / max (tokens)", f"{statistics.median(caps):.0f} / {max(caps)}"),
        ("first call, median (in + cap)", f"{statistics.median(first):.0f}"),
        ("repair turn, median (in + answer shown + cap)", f"{statistics.median(repair):.0f}"),
        ("a section that fails twice now, median", f"{statistics.median(failed_now):.0f}"),
        ("the same before (cap 1,024), median", f"{statistics.median(before):.0f}"),
        ("total for every section failing twice, now / before",
         f"{sum(failed_now):,.0f} / {sum(before):,.0f}"),
        ("output per chunk, rules' plans with ranges (plain)", f"{ranged / chunks:.2f}"),
        ("output per chunk, {\"chunks\"} with ranges (schema)", f"{schema_ranged / chunks:.2f}"),
        ("output per chunk, {\"chunks\"} every ID listed", f"{listed / chunks:.2f}"),
        ("cap / longest answer (every ID its own chunk), min", f"{min(headroom):.2f}"),
    ]  # fmt: skip
    body = "\n".join(
        [
            "## Planning: what a failed answer costs (cap sized to the section, one repair turn)",
            "",
            f"`python bench/planning_repair_cost.py --write` on the corpus Markdown ({machine()}):"
            " tokens at 4 characters a token, a failed answer taken at its worst (cut off at"
            " its cap). The repair turn's benefit needs a real model and is not measured here.",
            "",
            "| measure | tokens |",
            "|---|---:|",
            *[f"| {name} | {value} |" for name, value in rows],
        ]
    )
    print(body)
    if args.write:
        write_section("planning-repair-cost", body)


if __name__ == "__main__":
    main()
