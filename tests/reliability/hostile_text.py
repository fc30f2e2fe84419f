"""Pathological text for drac's detectors and parsers, generated on demand (nothing committed).

Each family aims at a way a backtracking regex or a naive scan goes superlinear: many
comments, unclosed openers, long runs of blank space, deep nesting, one huge line.
"""

from __future__ import annotations

from collections.abc import Callable

SIZE = 100_000
"""Characters per generated input: large enough that quadratic work takes seconds."""


def _repeat(unit: str, size: int, prefix: str = "", suffix: str = "") -> str:
    return prefix + unit * max(1, (size - len(prefix) - len(suffix)) // len(unit)) + suffix


def comment_bomb(count: int = 40) -> str:
    """The issue's reproduction: leading HTML comments in front of a Markdown document."""
    comments = "".join(f"<!-- note {index} -->\n" for index in range(count))
    return comments + "# Title\n\nSome text.\n"


TEXT_FAMILIES: dict[str, Callable[[int], str]] = {
    "comment bomb (40 comments)": lambda n: comment_bomb(40),
    "comment bomb (5,000 comments)": lambda n: comment_bomb(5000),
    "unclosed comments": lambda n: _repeat("<!-- a ", n),
    "unclosed page markers": lambda n: _repeat("<!-- Page 1 ", n),
    "page marker with 5,000 digits": lambda n: "<!-- Page " + "9" * 5000 + " -->\n\ntext\n",
    "blank lines": lambda n: _repeat("\n", n, prefix="a"),
    "whitespace lines": lambda n: _repeat(" \t\n", n, prefix="a\n"),
    "fence then blank lines": lambda n: _repeat("\n", n, prefix="```\n", suffix="x"),
    "unclosed fence then spaces": lambda n: _repeat(" ", n, prefix="```json"),
    "many fences": lambda n: _repeat("```\n", n),
    "open brackets": lambda n: _repeat("[", n),
    "unclosed links": lambda n: _repeat("[a](", n),
    "angle brackets": lambda n: _repeat("<", n),
    "html tag starts": lambda n: _repeat("<div ", n),
    "backticks": lambda n: _repeat("`", n),
    "asterisks": lambda n: _repeat("*a ", n),
    "digits": lambda n: _repeat("1", n),
    "ordered-list lookalikes": lambda n: _repeat("1. \n", n),
    "deep blockquote": lambda n: _repeat(">", n, suffix=" x\n"),
    "deep list indentation": lambda n: "".join("  " * depth + "- x\n" for depth in range(400)),
    "pipe line": lambda n: _repeat("|", n, suffix="x"),
    "table rule line": lambda n: _repeat("|---", n, suffix="x"),
    "wide table": lambda n: "|" + " a |" * (n // 8) + "\n|" + "---|" * (n // 8) + "\n",
    "grid border line": lambda n: _repeat("+", n, suffix="x"),
    "setext underlines": lambda n: _repeat("=\n", n, prefix="a\n"),
    "one huge line": lambda n: _repeat("word ", n),
    "one huge word": lambda n: _repeat("x", n),
    "sentence punctuation": lambda n: _repeat(".)", n),
    "cjk sentences": lambda n: _repeat("文。", n),
    "urls": lambda n: _repeat("http://", n),
    "json openers": lambda n: _repeat("[{", n),
    "range lookalikes": lambda n: _repeat("p1-", n),
    "xml declaration then comments": lambda n: "<?xml version='1.0'?>" + comment_bomb(2000),
    "html closing tags": lambda n: _repeat("</p>", n),
}
"""Every generated text input, by name: each takes the size in characters (some are fixed)."""


def hostile_text(family: str, size: int = SIZE) -> str:
    """The named family's input at about `size` characters."""
    return TEXT_FAMILIES[family](size)
