"""The offline converter: a PDF's text layer to Markdown without a model."""
