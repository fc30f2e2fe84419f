"""Load the ASL files of `statemachine/` and fill their `${Substitutions}`.

Numeric fields (MaxConcurrency) must be JSON numbers, which CloudFormation's string-only
DefinitionSubstitutions cannot produce, so numbers are filled here at synth time and every
ARN or name is left for CloudFormation's DefinitionSubstitutions. Tests use the same loader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

STATEMACHINE_DIR = Path(__file__).resolve().parent.parent / "statemachine"
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def placeholders(name: str) -> set[str]:
    """Return the names of every `${Name}` in one ASL file."""
    return set(PLACEHOLDER.findall((STATEMACHINE_DIR / f"{name}.asl.json").read_text()))


def render_definition(
    name: str, numbers: Mapping[str, int], strings: Mapping[str, str] | None = None
) -> str:
    """Return the ASL text of `statemachine/<name>.asl.json` with numbers (and strings) filled.

    Raises KeyError if a numeric placeholder is left without a value.
    """
    text = (STATEMACHINE_DIR / f"{name}.asl.json").read_text()
    for key, number in numbers.items():
        text = text.replace(f'"${{{key}}}"', str(int(number)))
    for key, string in (strings or {}).items():
        text = text.replace(f"${{{key}}}", string)
    json.loads(text)  # the file stays valid JSON after substitution
    return text
