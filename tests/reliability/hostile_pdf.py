"""PDFs written as text: thousands of pages in milliseconds (PDFium's own writer takes a minute)."""

from __future__ import annotations


def many_pages_pdf(count: int, text: str = "tiny page", side_pt: int = 72) -> bytes:
    """A PDF of `count` pages of `side_pt` points square, all showing `text` in Helvetica."""
    safe = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    content = f"BT /F1 6 Tf 4 {side_pt // 2} Td ({safe}) Tj ET".encode()
    first_page = 5
    kids = " ".join(f"{first_page + index} 0 R" for index in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    ]
    page = (
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {side_pt} {side_pt}] "
        "/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    ).encode()
    objects.extend(page for _ in range(count))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
