"""Deterministic parsing of converted Markdown into ID-addressed elements."""

from drac.parsing.markdown import PAGE_MARKER, normalise_newlines, parse_markdown
from drac.parsing.split import split_text

__all__ = ["PAGE_MARKER", "normalise_newlines", "parse_markdown", "split_text"]
