"""Reading a document (docs/design.md): its format and limits, images, a PDF's text layers and pages,
its text page by page, long documents in page windows, and packets in sections."""
