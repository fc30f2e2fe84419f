"""Retrieval evaluation by the D-RAC paper's protocol: queries, relevance judge, metrics,
retrievers, chunk sets (drac, fixed windows, any JSONL) and the side-by-side report."""
