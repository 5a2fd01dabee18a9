"""A path says what it holds: no module or package shadows the standard library or a dependency, and a name
used in two places means the same thing in both (docs/contributing.md, "Names")."""

from __future__ import annotations

import sys
from collections import defaultdict
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("functions", "stacks", "docagent", "scripts")

# A name in two places, and the one thing it means in both.
SAME_MEANING = {
    "__init__": "a package",
    "cli": "the command line of its package (docagent, its eval and its experiment)",
    "approval": "a job's approval: its payloads (functions/payloads/) and approve and reject (operations/)",
    "storage": "where a job's data lives: its keys (functions/) and its buckets and tables (stacks/)",
    "observability": "logs, metrics and traces: emitted (functions/), their groups and alarms (stacks/)",
    "report": "the report a run writes: the evaluation's and the experiment's",
    "payloads": "a part's pydantic payloads: the pipeline's steps, the actions', batch inference's",
    "runner": "a drill's run behind its command: the crash matrix's and the experiment's",
    "spend": "a job's model spend: priced (functions/), shown and budgeted by the operator (operations/)",
    "page_windows": "a long PDF's page windows: planned, sliced and merged (functions/), answered by the "
    "local Bedrock (localcloud/bedrock/)",
    "evidence": "a field's evidence (quote, page): its model (payloads/), asked for and read in a reply "
    "(inference/), given by the local model (localcloud/bedrock/)",
    "calibration": "how well confidence matches accuracy: the stored fit (functions/payloads/), measured and "
    "fitted from labelled runs (docagent/evaluation/)",
    "prompt_cache": "Bedrock's prompt caching: asked for where it pays (functions/inference/), answered as "
    "Bedrock does (localcloud/bedrock/)",
    "cascade": "a definition's cheap model first, then the strong one: run (functions/inference/), measured "
    "against the strong model alone (docagent/evaluation/)",
}


def modules() -> list[Path]:
    found: list[Path] = []
    for top in SHIPPED:
        for path in (ROOT / top).rglob("*.py"):
            if "sdk_layer" not in path.parts and "__pycache__" not in path.parts:
                found.append(path.relative_to(ROOT))
    return found


def names(path: Path) -> list[str]:
    """The module's own name, and every package folder's name on its way (below the top package)."""
    return [path.stem, *path.parts[1:-1]]


def test_no_module_shadows_the_standard_library_or_a_dependency() -> None:
    taken = set(sys.stdlib_module_names) | set(packages_distributions())
    taken -= {"functions", "stacks", "docagent", "scripts", "tests"}  # ours, installed in development mode
    shadowing = sorted({f"{path} ({name})" for path in modules() for name in names(path) if name in taken})
    assert shadowing == []


def test_a_name_in_two_places_means_one_thing() -> None:
    handlers = {path.stem for path in (ROOT / "functions" / "handlers").glob("*.py")}
    places: dict[str, set[Path]] = defaultdict(set)
    for path in modules():
        places[path.stem].add(path.parent)
    repeated = {name: folders for name, folders in places.items() if len(folders) > 1}
    # A handler and its logic for one step share the step's name (functions/handlers, functions/logic).
    unexplained = sorted(name for name in repeated if name not in SAME_MEANING and name not in handlers)
    assert unexplained == [], {name: sorted(map(str, repeated[name])) for name in unexplained}
    assert set(SAME_MEANING) - set(repeated) == set(), "a name explained here is no longer repeated: drop it"


def test_every_handler_has_its_logic() -> None:
    handlers = {path.stem for path in (ROOT / "functions" / "handlers").glob("*.py")} - {"__init__"}
    logic = {path.stem for path in (ROOT / "functions" / "logic").glob("*.py")}
    packages = {path.parent.name for path in (ROOT / "functions").glob("*/__init__.py")}
    # A step whose logic is several modules has a package of its name (functions/batch_inference/).
    assert handlers - logic - packages == set()
