"""Structure read from DOCX, PPTX and HTML files themselves, and placed on their pages."""
