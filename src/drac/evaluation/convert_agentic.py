"""Convert agentic reference files to the `drac export` JSON Lines contract.

Usage: python -m drac.evaluation.convert_agentic agentic-reference-*.jsonl > agentic.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from drac.evaluation.chunksets import agentic_reference_to_chunks


def main(argv: list[str] | None = None) -> int:
    """Write the chunks of every given reference file to stdout, one JSON object per line."""
    parser = argparse.ArgumentParser(
        prog="python -m drac.evaluation.convert_agentic",
        description="Convert agentic reference files ({file_name, title, chunks}) to the"
        " `drac export` JSON Lines contract on stdout.",
    )
    parser.add_argument("files", nargs="+", type=Path, help="agentic-reference-*.jsonl")
    args = parser.parse_args(argv)
    for path in args.files:
        try:
            with path.open(encoding="utf-8") as handle:
                for chunk in agentic_reference_to_chunks(handle):
                    sys.stdout.write(json.dumps(chunk, ensure_ascii=False) + "\n")
        except (OSError, ValueError, KeyError) as exc:
            parser.error(f"{path}: {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
