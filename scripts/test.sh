#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite: ruff, the import layering
# contracts (import-linter), mypy, pytest, then the unit tests again with every core
# dependency at its lowest allowed version (scripts/test_lowest.sh), and the integration tests
# with each framework at its lowest (scripts/test_integrations_lowest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/lint-imports --no-cache  # the layering contracts in pyproject.toml
.venv/bin/mypy
set +e
.venv/bin/python -m pytest --durations=25 "$@"  # the slowest 25: what keeps CI inside its budget
status=$?
set -e
# pytest exits 5 when it collected no tests; that is a broken suite here, not a pass.
if [ "$status" -eq 5 ]; then
  echo "test: pytest collected no tests" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  exit "$status"
fi
bash scripts/test_lowest.sh
bash scripts/test_integrations_lowest.sh
