"""Knowledge Base fixed chunks vs drac's chunks of the same parsed text (the KbTransform path).

Usage:
    python bench/kb_chunks.py [--companies velvera,cloudway] [--embedder embedded|local:PATH|none]
        [--tokens 300] [--overlap 20] [-k 6] [--write]

The parsed text is each corpus document's Markdown (what a knowledge base's parser hands a
custom transformation). The baseline is Bedrock's fixed-size chunking at 300 tokens with 20 %
overlap: the size of Bedrock's default chunking ("splits content into text chunks of
approximately 300 tokens", Amazon Bedrock User Guide, "How content chunking works for
knowledge bases") and the FIXED_SIZE default of AWS's generative-ai-cdk-constructs ("default
chunk size of 300 tokens and 20% overlap"). Bedrock's tokenizer is not public, so
a token is approximated as 0.75 of a word (300 tokens = 225 words, overlap 45 words), cut on
whitespace. drac's chunks come from `drac.aws.stages.kb_transform.chunk_content`, the function's
own core, with the default strategy and the rules planner. BM25, the embedder (drac's embedded
multilingual-e5-small by default) and their RRF hybrid run on both sets; --write puts the
tables into docs/benchmarks.md (section "kb-chunks").
"""

from __future__ import annotations

import argparse
import sys
import time

from _common import COMPANIES, CORPUS, CachedEmbedder, machine, write_section
from retrieval import _companies
from rich.console import Console

from drac.aws.stages.kb_transform import FileContent, chunk_content
from drac.embedders.factory import embedder_from_spec
from drac.evaluation.chunksets import ChunkSet, EvalChunk
from drac.evaluation.queries import load_queries
from drac.evaluation.report import markdown_report, print_report
from drac.evaluation.runner import evaluate
from drac.ids import digest_of
from drac.strategies import resolve_strategy

WORDS_PER_TOKEN = 0.75


def word_windows(text: str, tokens: int, overlap_percent: int) -> list[str]:
    """Fixed windows of about `tokens` tokens (as words), consecutive ones overlapping."""
    words = text.split()
    size = max(1, round(tokens * WORDS_PER_TOKEN))
    step = max(1, size - round(size * overlap_percent / 100))
    windows = []
    for start in range(0, len(words), step):
        windows.append(" ".join(words[start : start + size]))
        if start + size >= len(words):
            break
    return windows


def documents(companies: list[str]) -> list[tuple[str, str]]:
    """(file name, Markdown) of the companies' corpus documents."""
    return [
        (path.name, path.read_text(encoding="utf-8"))
        for company in companies
        for path in sorted((CORPUS / COMPANIES[company] / "md").glob("*.md"))
    ]


def kb_fixed(docs: list[tuple[str, str]], tokens: int, overlap: int) -> ChunkSet:
    """The knowledge base's fixed-size chunks of every document."""
    chunks = [
        EvalChunk(chunk_id=f"{name}#{n}", source=name, text=text)
        for name, markdown in docs
        for n, text in enumerate(word_windows(markdown, tokens, overlap))
    ]
    return ChunkSet(name=f"KB fixed {tokens} tokens / {overlap} %", chunks=tuple(chunks))


def drac_transform(docs: list[tuple[str, str]]) -> ChunkSet:
    """drac's chunks of every document, as KbTransform writes them."""
    strategy = resolve_strategy("default")
    chunks = []
    for name, markdown in docs:
        content = FileContent(contentBody=markdown)
        for chunk in chunk_content(content, digest_of([name]), name, strategy):
            chunks.append(EvalChunk(chunk_id=chunk.chunk_id, source=name, text=chunk.text))
    return ChunkSet(name="drac (KbTransform, default)", chunks=tuple(chunks))


def _embedder(spec: str):
    inner = embedder_from_spec(spec)
    return None if inner is None else CachedEmbedder(inner)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", default="velvera,cloudway")
    parser.add_argument("--embedder", default="embedded", help="embedded, local:PATH or none")
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--overlap", type=int, default=20, help="percent")
    parser.add_argument("-k", type=int, default=6)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)

    docs = documents(_companies(args.companies))
    started = time.process_time()
    sets = [kb_fixed(docs, args.tokens, args.overlap), drac_transform(docs)]
    chunking_cpu = time.process_time() - started
    for chunk_set in sets:
        sizes = sorted(len(c.text) for c in chunk_set.chunks)
        print(
            f"{chunk_set.name}: {len(sizes)} chunks, median {sizes[len(sizes) // 2]} chars",
            file=sys.stderr,
        )
    report = evaluate(
        sets, load_queries(CORPUS / "queries.csv"), _embedder(args.embedder), k=args.k
    )
    print_report(report, Console(width=200))
    if args.write:
        shown = argv if argv is not None else sys.argv[1:]
        command = "python bench/kb_chunks.py " + " ".join(shown)
        counts = ", ".join(f"{s.name}: {len(s.chunks)} chunks" for s in sets)
        body = (
            "## Knowledge Base fixed chunks vs drac (KbTransform)\n\n"
            f"Command: `{command}`  \nMachine: {machine()}; chunking both sets took"
            f" {chunking_cpu:.1f} CPU s.  \n{counts}.\n\n" + markdown_report(report)
        )
        write_section("kb-chunks", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
