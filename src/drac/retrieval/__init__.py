"""Retrieval shared by `drac search`, `drac eval` and the cloud's retrieval API: one
tokenisation (`text`), one BM25 (`bm25`), dense cosine and reciprocal-rank fusion (`rank`).
Searching a workspace with them is the local runtime's `drac.local.search`."""
