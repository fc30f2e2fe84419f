#!/usr/bin/env bash
# Runs the unit tests with every core dependency at the lowest version pyproject.toml allows
# (pins derived by scripts/lowest_pins.py), in a virtualenv of its own at .venv/lowest.
# A failure here means a lower bound in pyproject.toml is too low for the code.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv/lowest
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
python3 scripts/lowest_pins.py >"$venv/constraints.txt"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
"$venv/bin/python" -m pip install -q -c "$venv/constraints.txt" -e '.[dev,embed]'  # what the tests import (embed: the default embedder's unit tests)
# pip may not move an installed package down to a pin that no longer applies: check them all.
"$venv/bin/python" - "$venv/constraints.txt" <<'PY'
import sys
from importlib.metadata import version
from packaging.version import Version
for line in open(sys.argv[1]).read().split():
    name, pinned = line.split("==")
    if Version(version(name)) != Version(pinned):
        sys.exit(f"test_lowest: {name} is {version(name)}, not the lowest allowed {pinned}")
PY
echo "test_lowest: core dependencies at $(tr '\n' ' ' <"$venv/constraints.txt")"
set +e
"$venv/bin/python" -m pytest tests/unit -q -p no:cacheprovider
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test_lowest: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
