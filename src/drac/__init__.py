"""drac: document retrieval-aware chunking.

Convert each document to retrieval-friendly Markdown once, plan chunks as arrays of element IDs,
and rebuild chunk text verbatim from stored elements.
"""

__version__ = "0.1.0"
