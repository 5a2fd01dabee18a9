"""What every part of a job definition's models shares (functions/definition/job_spec.py, case_spec.py,
action_specs.py): strict frozen models, and the patterns of names, fields and error names."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

# A definition's and a class's name: a path segment of S3 keys and a CLI argument.
NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
NAME_RULE = "lower-case letters, digits and '-', 1-63, starting with a letter or digit"
# A field of a class's schema, dotted for nested objects (``vendor.name``); list items are not addressed.
FIELD_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
# A check's or rejection's error name, as DocumentResult.error carries it (``NotInReference``).
ERROR_NAME_PATTERN = r"^[A-Z][A-Za-z0-9]{2,63}$"


class Strict(BaseModel):
    """A definition's part: unknown keys refused, immutable once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)
