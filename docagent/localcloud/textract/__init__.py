"""The local Textract: DetectDocumentText answered by a real OCR engine reading the page image
(docs/design.md, "Page text by OCR"; docs/performance.md, "OCR")."""
