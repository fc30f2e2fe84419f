"""Convert agentic reference files to the `drac export` JSON Lines contract.

Usage: python -m drac.evaluation.convert_agentic agentic-reference-*.jsonl > agentic.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from drac.evaluation.chunksets import agentic_reference_to_chunks


def main(argv: list[str] | None = None) -> int:
    """Write the chunks of every given reference file to stdout, one JSON object per line."""
    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for chunk in agentic_reference_to_chunks(handle):
                sys.stdout.write(json.dumps(chunk, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
