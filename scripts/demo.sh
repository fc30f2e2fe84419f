#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs drac offline on the bundled examples: ingest,
# show the summary, search, and export the chunks to examples-out/chunks.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ws=examples-out/.drac
rm -rf examples-out && mkdir -p examples-out
.venv/bin/drac ingest examples/documents --workspace "$ws"
.venv/bin/drac status --workspace "$ws"
.venv/bin/drac search "How do I file a warranty claim?" -k 3 --workspace "$ws"
.venv/bin/drac export --workspace "$ws" > examples-out/chunks.jsonl
echo "demo: $(wc -l < examples-out/chunks.jsonl) chunks written to examples-out/chunks.jsonl"
