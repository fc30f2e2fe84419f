"""`drac inspect`: a self-contained HTML report of how documents were converted and chunked.

`build` gathers a document's views from a workspace (pydantic models in `model`), `compare`
diffs two plan versions, `pages` finds page images and page notes, `histogram` draws chunk
sizes, `html` writes the markup (every piece of document text escaped) and `report` writes
the files.
"""
