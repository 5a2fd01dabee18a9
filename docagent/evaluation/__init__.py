"""``docagent eval``: score a job's results against labelled documents; refuse a change that makes them worse.

A job definition is one or more document classes, each a JSON Schema (2020-12; today the invoice job's
``ExtractedFacts.model_json_schema()``). A labelled set is a folder of documents, each with its expected JSON
beside it (``NAME.EXT`` + ``NAME.label.json``). ``scoring.evaluate(definition, samples, results)`` is the
seam: the kit's ``--job PATH`` will hand it its own schema and samples. Comparators come from the schema
(``comparators.py``), the figures are pydantic models (``models.py``), the gate compares two runs
(``gate.py``), and the report writes JSON, Markdown and plots (``report.py``). docs/evaluation.md tells how.
"""
