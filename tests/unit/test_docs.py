"""The documentation states the defaults the code has."""

from __future__ import annotations

import re
from pathlib import Path

from drac.models import ParseConfig, Strategy

ROOT = Path(__file__).resolve().parents[2]


def _stated_numbers(text: str) -> dict[str, int]:
    """`name` (1,100 ...) pairs as the docs write them."""
    return {
        name: int(number.replace(",", ""))
        for name, number in re.findall(r"`(\w+)` \((\d[\d,]*)", text)
    }


def test_architecture_states_the_strategy_defaults() -> None:
    text = (ROOT / "docs/architecture.md").read_text()
    section = text[text.index("A `Strategy` (pydantic) holds") :]
    section = section[: section.index("\n\n")]
    stated = _stated_numbers(section)
    defaults = Strategy().model_dump()
    assert {"target_chars", "hard_limit_chars", "min_chars", "preview_chars"} <= set(stated)
    assert {name: defaults[name] for name in stated} == stated


def test_architecture_states_the_element_limit() -> None:
    text = (ROOT / "docs/architecture.md").read_text()
    assert f"(default {ParseConfig().max_element_chars:,}," in text


PRODUCT_DOCS = ["README.md", "BENCHMARKS.md", "SECURITY.md", "RELIABILITY.md"]
# Where the commands and their options are written about (the full benchmark tables only quote
# the commands that produced them).
COMMAND_DOCS = ["README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")))]
COMMAND_DOCS.remove("docs/benchmarks.md")


def _first_block(text: str) -> list[str]:
    """The commands of the first fenced block, comments dropped."""
    block = text[text.index("```") :].split("\n", 1)[1]
    block = block[: block.index("```")]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_opens_with_the_two_commands_and_ci_runs_the_second() -> None:
    readme = (ROOT / "README.md").read_text()
    assert readme.index("```") < 20, "the two commands come first"
    assert _first_block(readme) == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    ci = [line for line in (ROOT / ".ci/run").read_text().splitlines() if line.startswith("exec")]
    assert ci == ["exec bash scripts/test.sh"]


def test_the_newcomer_pages_stay_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
    assert len((ROOT / "BENCHMARKS.md").read_text().splitlines()) <= 400


def test_product_docs_name_no_issue_and_no_branch() -> None:
    forbidden = re.compile(r"\bissue[- ]?#?\d+|\bthe issue\b|\bthis branch\b|\bhelper/", re.I)
    pages = [*PRODUCT_DOCS, *(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
    found = {page: forbidden.findall((ROOT / page).read_text()) for page in pages}
    assert {page: hits for page, hits in found.items() if hits} == {}


def test_every_bench_section_has_its_markers() -> None:
    """A benchmark's `--write` replaces the text between its markers; without them it would
    append a second copy at the end of the page."""
    written = {
        name
        for script in (ROOT / "bench").glob("*.py")
        for name in re.findall(r'write_section\(\s*"([\w-]+)"', script.read_text())
    }
    pages = (ROOT / "docs/benchmarks.md").read_text() + (ROOT / "RELIABILITY.md").read_text()
    assert len(written) > 20
    missing = [
        name
        for name in sorted(written)
        if f"<!-- bench:{name}:start -->" not in pages or f"<!-- bench:{name}:end -->" not in pages
    ]
    assert missing == []


def test_every_documented_option_is_one_of_its_commands() -> None:
    from drac.cli import _register_commands, cli

    _register_commands()
    names = {
        command: {opt for param in cli.commands[command].params for opt in param.opts}
        for command in cli.commands
    }
    invocation = re.compile(r"\bdrac (" + "|".join(sorted(names, key=len, reverse=True)) + r")\b")
    stated: list[tuple[str, str, str]] = []
    for page in COMMAND_DOCS:
        for line in (ROOT / page).read_text().splitlines():
            for found in invocation.finditer(line):
                rest = line[found.end() :].split("#", 1)[0].split("`", 1)[0]
                rest = rest.split(" drac ", 1)[0]  # a second command on the same line
                for option in re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])\b", rest):
                    stated.append((page, found.group(1), option))
    assert len(stated) > 40
    wrong = [
        (page, command, option)
        for page, command, option in stated
        if option not in names[command] | {"--help", "-h"}
    ]
    assert wrong == []
