"""A field's evidence (docs/design.md, "Evidence and confidence"): the grounding check and each field's
grounding mode, the confidence from a fit, and the document's outcome with its evidence."""
