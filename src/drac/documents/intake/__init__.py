"""What a file is and how it becomes a PDF: format detection, container checks, normalisation."""
