"""Parsing pathological Markdown costs memory proportional to nothing worse than its size.

Python's regex engine keeps a backtracking entry per repetition of a group: mistune's
blank-line rule spent 946 MiB on a million blank lines before its possessive form.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

CASES = {
    "a million blank lines": "'a' + '\\n' * 1_000_000",
    "a line of a million '='": "'a\\n' + '=' * 1_000_000 + '\\n'",
    "a thematic break of a million characters": "'- ' * 500_000 + '\\n'",
    "a grid table of 250,000 lines": "'+--+\\n' + '|x|\\n' * 250_000",
    "an HTML block then a million blank lines": "'<div>\\n' + '\\n' * 1_000_000 + 'x'",
}

_MEASURE = """
from drac.parsing.blocks import split_blocks

def peak():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024

split_blocks("warm up\\n\\n# the parser\\n")
text = {expression}
before = peak()
split_blocks(text)
print(json.dumps(peak() - before))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("case", sorted(CASES))
def test_splitting_blocks_needs_little_memory_beyond_the_text(case: str) -> None:
    code = "import json\n" + textwrap.dedent(_MEASURE).format(expression=CASES[case])
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(run.stdout) < 40, f"{case}: {run.stdout.strip()} MiB"
