"""Stages 1 and 2: detect, normalise to PDF, render pages, convert to Markdown (import the
modules themselves: the package loads nothing, so a Lambda loads only what its stage uses)."""
