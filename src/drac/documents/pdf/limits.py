"""What a pdfium worker may use, in a module of its own: a command can start pdfium workers
ahead (`containment.start_ahead`) before it imports pdfium and the renderer itself."""

from __future__ import annotations

from drac.documents.sandbox.containment import GIB, Limits

PDF_LIMITS = Limits(
    memory_bytes=2 * GIB,
    cpu_s=300.0,
    step_cpu_s=30.0,
    wall_s=600.0,
    preload=("drac.documents.pdf.render", "drac.documents.offline.pages", "PIL.PngImagePlugin"),
)
"""What the pdfium worker may use for one document (CPU per document and per page)."""
