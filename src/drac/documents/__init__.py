"""Stages 1 and 2: detect, normalise to PDF, render pages, convert to Markdown."""

from drac.documents.convert import ConversionOptions, ConversionResult, convert_to_markdown

__all__ = ["ConversionOptions", "ConversionResult", "convert_to_markdown"]
