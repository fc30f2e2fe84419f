"""Retrieval shared by `drac search` and `drac eval`: one tokenisation (`text`), one BM25
(`bm25`), dense cosine and reciprocal-rank fusion (`rank`), and search over a workspace
(`search`)."""
