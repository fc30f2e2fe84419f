#!/usr/bin/env bash
# Runs the integration tests (LangChain, LlamaIndex, MCP) with each framework at the lowest
# version pyproject.toml allows (pins derived by scripts/lowest_pins.py), in a virtualenv of
# its own at .venv/integrations-lowest; the main virtualenv has their newest versions.
# A failure here means a lower bound of the langchain, llamaindex or mcp extra is too low.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv/integrations-lowest
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
python3 scripts/lowest_pins.py langchain llamaindex mcp >"$venv/constraints.txt"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
# drac's core with the extras at their pins, and pytest: nothing else the three tests import
"$venv/bin/python" -m pip install -q -c "$venv/constraints.txt" -e '.[langchain,llamaindex,mcp]' pytest
echo "test_integrations_lowest: $(tr '\n' ' ' <"$venv/constraints.txt")"
# langsmith's pytest plugin (installed with langchain-core) is not wanted here
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  tests/integration/test_langchain.py tests/integration/test_llamaindex.py tests/integration/test_mcp.py
