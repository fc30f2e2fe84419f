"""One PDF's pages: rendered, their words and boxes, elements placed on them, OCR of scans."""
