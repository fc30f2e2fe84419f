#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the whole test suite: ruff, the import layering
# contracts (import-linter), mypy, pytest, then the unit tests again with every core
# dependency at its lowest allowed version (scripts/test_lowest.sh), and the integration tests
# with each framework at its lowest (scripts/test_integrations_lowest.sh).
#
# `bash scripts/test.sh --fast` is the tier to run while working (a few minutes on 2 cores):
# ruff, the import contracts and mypy with their caches, then the unit tests on two pytest-xdist
# workers without those marked libreoffice, subprocess, slow or real_model. Setup runs only when
# .venv is missing or lacks pytest-xdist. Further arguments go to pytest in both tiers.
set -euo pipefail
cd "$(dirname "$0")/.."

# pytest's exit status, except that collecting no tests (status 5) is a broken suite, not a pass.
run_pytest() {
  local status=0
  .venv/bin/python -m pytest "$@" || status=$?
  if [ "$status" -eq 5 ]; then
    echo "test: pytest collected no tests" >&2
    return 1
  fi
  return "$status"
}

if [ "${1:-}" = "--fast" ]; then
  shift
  if ! .venv/bin/python -c "import xdist" 2>/dev/null; then
    bash scripts/setup.sh
  fi
  .venv/bin/ruff check .
  .venv/bin/lint-imports
  .venv/bin/mypy
  run_pytest tests/unit -q -n 2 --durations=10 \
    -m "not libreoffice and not subprocess and not slow and not real_model" "$@"
  exit 0
fi

bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/lint-imports --no-cache  # the layering contracts in pyproject.toml
.venv/bin/mypy
# Two workers, each test file on one of them (module fixtures, such as a synthesised stack,
# are then built once); the slowest 25 tests: what keeps CI inside its budget.
run_pytest -n 2 --dist loadfile --durations=25 "$@"
bash scripts/test_lowest.sh
bash scripts/test_integrations_lowest.sh
