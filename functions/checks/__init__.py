"""A class's checks (docs/defining-a-job.md, "Checks and outcome"): the fields against their schema, the
rules (patterns in RE2, JSONata expressions), the reference table's lookups, the checks' outcomes, and
a packet's case rules."""
