"""Load the ASL files of `statemachine/` and fill their `${Substitutions}`.

Numeric fields (MaxConcurrency, TimeoutSeconds) must be JSON numbers, which CloudFormation's
string-only DefinitionSubstitutions cannot produce, so numbers are filled here at synth time
and every ARN or name is left for CloudFormation's DefinitionSubstitutions. Tests use the
same loader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

STATEMACHINE_DIR = Path(__file__).resolve().parent.parent / "statemachine"
TASK_TIMEOUT_MARGIN_S = 60
"""How long past its function's own timeout a Lambda task waits: the function times out
first (Sandbox.Timedout, retried); TimeoutSeconds only ends an invocation Step Functions never
hears back from (States.Timeout, retried the same way)."""
CHILD_EXECUTION_TIMEOUT_S = 7 * 24 * 3600
"""The top-level TimeoutSeconds of the child machines (convert, plan). Every task of a child
has its own timeout and bounded retries, so a child ends by itself: one throttled task can
back off for about 8.5 hours (40 tries, at most 900 s apart), and a group of 100 batches at 5
in flight waits through at most 20 such rounds in the worst case, about a week. Past it the
child times out (its ExecutionsTimedOut alarm) and the parent's Catch handles the failure."""
CHILD_WAIT_MARGIN_S = 3600
"""How long past a child's own timeout its parent's task waits: the child times out first,
so the timeout is the child's (alarmed), never a parent task's States.Timeout."""
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def placeholders(name: str) -> set[str]:
    """Return the names of every `${Name}` in one ASL file."""
    return set(PLACEHOLDER.findall((STATEMACHINE_DIR / f"{name}.asl.json").read_text()))


def extended(name: str, extensions: Sequence[str] = ()) -> str:
    """The ASL text of `statemachine/<name>.asl.json` with each extension file applied: its
    `Patch` sets fields of the base's top-level states (null removes one) and its `States`
    are added (escalate.asl.json extends convert)."""
    text = (STATEMACHINE_DIR / f"{name}.asl.json").read_text()
    if not extensions:
        return text
    definition = json.loads(text)
    states = definition["States"]
    for extension in extensions:
        fragment = json.loads((STATEMACHINE_DIR / f"{extension}.asl.json").read_text())
        if fragment["Extends"] != name:
            raise ValueError(f"{extension}.asl.json extends {fragment['Extends']}, not {name}")
        for state, fields in fragment["Patch"].items():
            for key, value in fields.items():
                if value is None:
                    states[state].pop(key, None)
                else:
                    states[state][key] = value
        if set(fragment["States"]) & set(states):
            raise ValueError(f"{extension}.asl.json redefines a state of {name}")
        states.update(fragment["States"])
    return json.dumps(definition, indent=2)


def render_definition(
    name: str,
    numbers: Mapping[str, int],
    strings: Mapping[str, str] | None = None,
    extensions: Sequence[str] = (),
) -> str:
    """Return the ASL text of `statemachine/<name>.asl.json` (with its `extensions`) with
    numbers (and strings) filled.

    Raises KeyError if a numeric placeholder is left without a value.
    """
    text = extended(name, extensions)
    for key, number in numbers.items():
        text = text.replace(f'"${{{key}}}"', str(int(number)))
    for key, string in (strings or {}).items():
        text = text.replace(f"${{{key}}}", string)
    json.loads(text)  # the file stays valid JSON after substitution
    return text


def task_timeouts(function_timeouts_s: Mapping[str, int]) -> dict[str, int]:
    """The `${<Function>TimeoutSeconds}` numbers of the ASL from each function's timeout
    (keyed by the name in `${<Function>FunctionArn}`), the child machines' own timeout and how
    long their parents wait for them."""
    numbers = {
        f"{name}TimeoutSeconds": seconds + TASK_TIMEOUT_MARGIN_S
        for name, seconds in function_timeouts_s.items()
    }
    numbers["ChildExecutionTimeoutSeconds"] = CHILD_EXECUTION_TIMEOUT_S + CHILD_WAIT_MARGIN_S
    numbers["MachineTimeoutSeconds"] = CHILD_EXECUTION_TIMEOUT_S
    return numbers
